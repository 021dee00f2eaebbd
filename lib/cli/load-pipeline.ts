import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ENVIRONMENT_MARK, StreamExecutionEnvironment } from '../api/environment.js';
import type { InputGenerator } from '../offline/offline.js';
import { isSqlPipelineFile, loadSqlPipeline } from '../sql/pipeline-file.js';

/** A pipeline file's exports: the environment (default) and, optionally, an input generator for offline mode. */
export interface PipelineModule {
  readonly pipeline: StreamExecutionEnvironment;
  readonly generateInput?: InputGenerator;
}

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** An import the pipeline file (or a module it imports) makes of a package that is not installed, in one line with the fix. */
function missingPackage(error: unknown, file: string): Error | undefined {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' || typeof message !== 'string') return undefined;
  const match = /Cannot find package '([^']+)' imported from (.+)$/m.exec(message);
  if (!match?.[1]) return undefined;
  const name = packageOf(match[1]);
  return new Error(`${file} imports the package ${name}, which is not installed (from ${match[2]}): npm install ${name}`, { cause: error });
}

/** Where the pipeline file's own `sluice` is, when it is not this one. */
function otherSluiceOf(path: string): string {
  try {
    return dirname(createRequire(path).resolve('sluice/package.json'));
  } catch {
    return 'another installation';
  }
}

/** Loads a pipeline file: a `.sql` script, or a module whose default export is the pipeline's environment. */
export async function loadPipelineModule(file: string): Promise<PipelineModule> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`Pipeline file ${file} does not exist`);
  if (isSqlPipelineFile(path)) return { pipeline: loadSqlPipeline(path) };
  let module: { default?: unknown; generateInput?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as typeof module;
  } catch (error) {
    throw missingPackage(error, file) ?? error;
  }
  if (!(module.default instanceof StreamExecutionEnvironment)) {
    if (typeof module.default === 'object' && module.default !== null && ENVIRONMENT_MARK in module.default) {
      throw new Error(
        `${file} builds its pipeline with the sluice in ${otherSluiceOf(path)}, not with this command's: run the sluice ` +
          `installed beside the pipeline (npx sluice, from the project's folder)`,
      );
    }
    throw new Error(`${file} has no default export of a StreamExecutionEnvironment: end the file with \`export default env\``);
  }
  if (module.generateInput !== undefined && typeof module.generateInput !== 'function') {
    throw new Error(`${file} exports generateInput, but not as a function (index: number) => { topic, key, value }`);
  }
  return { pipeline: module.default, ...(module.generateInput ? { generateInput: module.generateInput as InputGenerator } : {}) };
}

export async function loadPipeline(file: string): Promise<StreamExecutionEnvironment> {
  return (await loadPipelineModule(file)).pipeline;
}
