// DESIGN.md's layering: the runtime uses plan, operators, state, snapshot and kafka; aws,
// offline and cli use the runtime, never the other way round.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { RELATIVE_IMPORT } from '../../simulation/ledger.js';

const LIB = join(import.meta.dirname, '../../../lib');
const RUNTIME = join(LIB, 'runtime');

/** Every module of lib/ and the modules it imports (type-only imports too), as paths under lib/. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(LIB, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
  return new Map(
    files.map((file) => [
      file,
      [...readFileSync(join(LIB, file), 'utf8').matchAll(RELATIVE_IMPORT)].map((match) =>
        relative(LIB, resolve(dirname(join(LIB, file)), (match[1] ?? match[2] ?? '').replace(/\.js$/, '.ts'))),
      ),
    ]),
  );
}

/** The import cycles of a graph: one path per cycle found by a depth-first walk, each closing on its first module. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const visit = (file: string, path: string[]) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file, []);
  return found;
}

describe('lib/runtime', () => {
  it('imports nothing from lib/aws, lib/offline or lib/cli', () => {
    const upward = readdirSync(RUNTIME)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        [...readFileSync(join(RUNTIME, file), 'utf8').matchAll(/from '(\.\.\/(?:aws|offline|cli)\/[^']+)'/g)].map((m) => `${file}: ${m[1]}`),
      );
    expect(upward).toEqual([]);
  });
});

describe('lib/sql', () => {
  // SQL compiles to the DataStream API, so that state, checkpoints and exactly-once carry over unchanged.
  it('plans onto lib/api, and reaches nothing of the runtime', () => {
    const outside = [...importGraph()]
      .filter(([file]) => file.startsWith('sql/'))
      .flatMap(([file, imports]) => imports.filter((target) => !/^(sql|api)\//.test(target) && target !== 'kafka/records.ts').map((target) => `${file} → ${target}`));
    expect(outside).toEqual([]);
  });
});

describe('lib', () => {
  // DataStream and ConnectedStreams name each other, as Flink's do: lib/api alone may.
  it('has no import circle outside lib/api', () => {
    expect(cycles(importGraph()).filter((cycle) => !cycle.every((file) => file.startsWith('api/'))).map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});

/** Each function of a module with a body, by the name it is declared or assigned under, and its length in lines. */
function functionLengths(file: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const lengths: { name: string; lines: number }[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const named = node.name ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      lengths.push({ name: `${relative(LIB, file)}: ${named?.getText(source) ?? 'an anonymous function'}`, lines: lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lengths;
}

describe('lib/runtime reads as its protocol', () => {
  const lengths = readdirSync(RUNTIME)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => functionLengths(join(RUNTIME, file)));

  it('has no function longer than 80 lines', () => {
    expect(lengths.filter(({ lines }) => lines > 80).map(({ name, lines }) => `${name}: ${lines} lines`)).toEqual([]);
  });

  it("keeps processShard to its steps, in 60 lines or fewer", () => {
    const processShard = lengths.find(({ name }) => name.endsWith('processor.ts: processShard'));
    expect(processShard?.lines).toBeLessThanOrEqual(60);
  });
});
