// Runs every `ts` example of docs/api.md, so that the API documentation stays true.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const docs = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
const workDir = fileURLToPath(new URL('../../../docs/.examples/', import.meta.url));
const blocks = [...readFileSync(docs, 'utf8').matchAll(/^## (.+)$|^```ts\n([\s\S]*?)^```$/gm)].reduce<
  { section: string; code: string }[]
>((found, [, heading, code]) => {
  if (heading) return [...found, { section: heading, code: '' }];
  const last = found.at(-1);
  if (last && code !== undefined) return [...found.slice(0, -1), ...(last.code ? [last] : []), { section: last.section, code }];
  return found;
}, []).filter((block) => block.code !== '');

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('docs/api.md', () => {
  it('has examples', () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it.each(blocks.map((block, index) => [`${index + 1}. ${block.section}`, block.code] as const))(
    'example %s runs and its assertions hold',
    async (name, code) => {
      mkdirSync(workDir, { recursive: true });
      // Examples import '../lib/...' from docs/; they run one folder deeper.
      const file = `${workDir}example-${name.split('.')[0] ?? '0'}.ts`;
      writeFileSync(file, code.replaceAll("from '../", "from '../../"));
      await import(file);
    },
  );
});
