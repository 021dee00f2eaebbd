// The public surface of the package, one report per entry point in package.json's exports
// (api/<entry>.api.md): every exported name with its type, and each class's and interface's
// public members. A change to the surface changes a report, so that it shows in review;
// test/unit/package/api-report.test.ts fails while a report is out of date.
//   npx tsx scripts/api-report.ts           writes the reports
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');

interface Manifest {
  exports: Record<string, string | { default: string }>;
}

/** Each public entry point: its name in the exports map (`sluice`, `sluice/testing`, ...) and its source file. */
export function entryPoints(): { specifier: string; source: string }[] {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
  const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, [string]> } };
  return Object.keys(exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => {
      const specifier = subpath === '.' ? 'sluice' : `sluice/${subpath.slice(2)}`;
      const [source] = compilerOptions.paths[specifier] ?? [];
      if (!source) throw new Error(`package.json exports ${subpath}, but tsconfig.json's paths do not map ${specifier} to its source`);
      return { specifier, source: join(ROOT, source) };
    });
}

const FLAGS: ts.TypeFormatFlags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.WriteArrowStyleSignature;

function isPublicDeclaration(declaration: ts.Declaration | undefined): boolean {
  return !declaration || (ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0;
}

function isPublic(symbol: ts.Symbol): boolean {
  return isPublicDeclaration(symbol.declarations?.[0]) && !symbol.name.startsWith('__@') && !symbol.name.startsWith('#');
}

function members(checker: ts.TypeChecker, type: ts.Type, at: ts.Node, indent: string): string[] {
  return checker
    .getPropertiesOfType(type)
    .filter(isPublic)
    .filter((property) => property.name !== 'prototype')
    .map((property) => {
      const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
      const propertyType = checker.getTypeOfSymbolAtLocation(property, at);
      const signatures = property.flags & ts.SymbolFlags.Method ? propertyType.getCallSignatures() : [];
      if (signatures.length > 0) return signatures.map((signature) => `${indent}${property.name}${optional}${checker.signatureToString(signature, undefined, FLAGS)}`).join('\n');
      return `${indent}${property.name}${optional}: ${checker.typeToString(propertyType, undefined, FLAGS)}`;
    })
    .sort();
}

function describe(checker: ts.TypeChecker, exported: ts.Symbol, at: ts.Node): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const parts: string[] = [];
  if (symbol.flags & ts.SymbolFlags.Class) {
    const staticSide = checker.getTypeOfSymbolAtLocation(symbol, at);
    const constructors = staticSide.getConstructSignatures().filter((signature) => isPublicDeclaration(signature.declaration as ts.Declaration | undefined));
    parts.push(
      [`class ${name} {`, ...constructors.map((signature) => `  new${checker.signatureToString(signature, undefined, FLAGS)}`), ...members(checker, staticSide, at, '  static '), ...members(checker, checker.getDeclaredTypeOfSymbol(symbol), at, '  '), '}'].join('\n'),
    );
  } else if (symbol.flags & ts.SymbolFlags.Interface) {
    parts.push([`interface ${name} {`, ...members(checker, checker.getDeclaredTypeOfSymbol(symbol), at, '  '), '}'].join('\n'));
  }
  if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    const declaration = symbol.declarations?.find(ts.isTypeAliasDeclaration);
    parts.push(`type ${name} = ${declaration ? declaration.type.getText() : checker.typeToString(checker.getDeclaredTypeOfSymbol(symbol), undefined, FLAGS)}`);
  }
  if (symbol.flags & ts.SymbolFlags.Function) {
    for (const signature of checker.getTypeOfSymbolAtLocation(symbol, at).getCallSignatures()) parts.push(`function ${name}${checker.signatureToString(signature, undefined, FLAGS)}`);
  } else if (symbol.flags & ts.SymbolFlags.Variable) {
    parts.push(`const ${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, at), undefined, FLAGS)}`);
  }
  return parts.join('\n');
}

/** The reports, by file name under api/. */
export function apiReports(): Map<string, string> {
  const entries = entryPoints();
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file)) as { config: object };
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram({ rootNames: [...entries.map(({ source }) => source), join(ROOT, 'lib', 'kafka', 'internals.d.ts')], options: { ...options, noEmit: true } });
  const checker = program.getTypeChecker();
  const reports = new Map<string, string>();
  for (const { specifier, source } of entries) {
    const file = program.getSourceFile(source);
    const module = file && checker.getSymbolAtLocation(file);
    if (!file || !module) throw new Error(`${source} is not a module`);
    const exported = checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name));
    const body = exported.map((symbol) => describe(checker, symbol, file)).join('\n\n');
    reports.set(`${specifier.replace('/', '-')}.api.md`, `# ${specifier}\n\nThe public surface of \`${specifier}\`, written by scripts/api-report.ts: run \`npm run api:report\` after changing it.\n\n\`\`\`ts\n${body}\n\`\`\`\n`);
  }
  return reports;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  for (const [name, text] of apiReports()) writeFileSync(join(ROOT, 'api', name), text);
}
