// What importing each of the package's entry points loads, read from the sources: the static
// value imports (type-only imports load nothing; a dynamic import() loads when it runs).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entryPoints } from '../../../scripts/api-report.js';

/** The packages a module loads when it is imported, following its relative imports. */
function packagesLoadedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const loads =
        (ts.isImportDeclaration(statement) &&
          statement.importClause?.phaseModifier !== ts.SyntaxKind.TypeKeyword &&
          !(statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings) && !statement.importClause.name && statement.importClause.namedBindings.elements.every((element) => element.isTypeOnly))) ||
        (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier !== undefined);
      const specifier = (statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier;
      if (!loads || !specifier || !ts.isStringLiteral(specifier)) continue;
      if (specifier.text.startsWith('.')) pending.push(resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts')));
      else packages.add(specifier.text);
    }
  }
  return packages;
}

describe('the package entry points', () => {
  it('are the exports of package.json, each mapped to its source in tsconfig.json', () => {
    expect(entryPoints().map(({ specifier }) => specifier)).toEqual(['sluice', 'sluice/testing', 'sluice/lambda', 'sluice/kafka']);
  });

  it('sluice and sluice/testing load neither kafkajs nor the AWS SDK', () => {
    for (const { specifier, source } of entryPoints().filter(({ specifier }) => specifier === 'sluice' || specifier === 'sluice/testing')) {
      const heavy = [...packagesLoadedBy(source)].filter((name) => name.startsWith('kafkajs') || name.startsWith('@aws-sdk/') || name.startsWith('@aws-lambda-powertools/'));
      expect(heavy, specifier).toEqual([]);
    }
  });

  it('sluice/lambda loads the runtime: the check above sees what it loads', () => {
    const lambda = entryPoints().find(({ specifier }) => specifier === 'sluice/lambda');
    expect([...packagesLoadedBy(lambda?.source ?? '')]).toEqual(expect.arrayContaining(['kafkajs', '@aws-sdk/client-dynamodb']));
  });
});
