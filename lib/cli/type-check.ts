// Type-checks a pipeline file, and what it imports, before a command runs it: tsx runs
// TypeScript without checking it, so a wrong argument would otherwise surface as a failing
// batch. The project's TypeScript and tsconfig.json are used where it has them; the check is
// incremental, its state in .sluice/typecheck/, so that an unchanged pipeline costs little.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import type TypeScript from 'typescript';

/** A pipeline that does not type-check: each error with its file, line and column. */
export class PipelineTypeError extends Error {
  override readonly name = 'PipelineTypeError';
}

/** Options for a project without a tsconfig.json: what `sluice init` writes. */
const DEFAULT_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  skipLibCheck: true,
};

/** The project's TypeScript, else the one installed beside Sluice (its peer dependency). */
function loadTypeScript(projectDir: string): typeof TypeScript {
  for (const from of [join(projectDir, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('typescript') as typeof TypeScript;
    } catch {
      // Not installed there; try the next place.
    }
  }
  throw new PipelineTypeError('sluice type-checks pipeline files with TypeScript, which is not installed: npm install --save-dev typescript (or pass --no-type-check)');
}

/**
 * Compiler options from the tsconfig.json nearest the pipeline file, else {@link DEFAULT_OPTIONS},
 * and the declaration files it includes (a project's `declare module` for an untyped package).
 */
function projectConfig(ts: typeof TypeScript, path: string): { options: TypeScript.CompilerOptions; declarations: string[] } {
  const configFile = ts.findConfigFile(dirname(path), (file) => ts.sys.fileExists(file), 'tsconfig.json');
  if (!configFile) return { options: ts.convertCompilerOptionsFromJson(DEFAULT_OPTIONS, dirname(path)).options, declarations: [] };
  const read = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
  if (read.error) throw new PipelineTypeError(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const { options, fileNames } = ts.parseJsonConfigFileContent(read.config as object, ts.sys, dirname(configFile), undefined, configFile);
  return { options, declarations: fileNames.filter((file) => file.endsWith('.d.ts')) };
}

/** Throws a {@link PipelineTypeError} naming every type error of the pipeline file and the modules it imports. */
export function typeCheckPipeline(file: string, projectDir: string): void {
  const ts = loadTypeScript(projectDir);
  const path = resolve(file);
  const stateDir = join(projectDir, '.sluice', 'typecheck');
  const project = projectConfig(ts, path);
  const options: TypeScript.CompilerOptions = {
    ...project.options,
    noEmit: true,
    incremental: true,
    tsBuildInfoFile: join(stateDir, `${createHash('sha256').update(path).digest('hex').slice(0, 16)}.tsbuildinfo`),
  };
  const host = ts.createIncrementalCompilerHost(options);
  // Commands that run at once (tests, two terminals) may check at once: each state file is renamed into place whole.
  host.writeFile = (name, text) => {
    mkdirSync(dirname(name), { recursive: true });
    const staging = `${name}.${randomUUID()}.tmp`;
    writeFileSync(staging, text);
    renameSync(staging, name);
  };
  const program = ts.createIncrementalProgram({ rootNames: [path, ...project.declarations], options, host });
  const errors = [...program.getConfigFileParsingDiagnostics(), ...program.getSyntacticDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSemanticDiagnostics()].filter(
    (diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error,
  );
  if (errors.length > 0) {
    const shown = errors.slice(0, 10).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      if (!diagnostic.file || diagnostic.start === undefined) return `error TS${diagnostic.code}: ${message}`;
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${relative(process.cwd(), diagnostic.file.fileName)}:${line + 1}:${character + 1}: error TS${diagnostic.code}: ${message}`;
    });
    const more = errors.length > shown.length ? `\n(and ${errors.length - shown.length} more)` : '';
    throw new PipelineTypeError(`${file} does not type-check; fix it, or pass --no-type-check to run it as it is:\n${shown.join('\n')}${more}`);
  }
  program.emit();
}
