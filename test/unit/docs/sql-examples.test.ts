// Runs docs/sql.md's examples: each query over the examples' table gives the result the doc
// shows, and each script parses (the seed pipeline's plans), so that the SQL documentation stays true.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sqlPipeline } from '../../../lib/sql/index.js';
import { parseStatements } from '../../../lib/sql/parser.js';
import { parseInputLines, runQuery } from '../../conformance/scenarios.js';

const text = readFileSync(fileURLToPath(new URL('../../../docs/sql.md', import.meta.url)), 'utf8');
const blocks = [...text.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, language, code]) => ({ language, code: code ?? '' }));
const input = parseInputLines(blocks.find((b) => b.language === 'csv')?.code ?? '', 'docs/sql.md');
const queries = blocks.flatMap((block, i) => (block.language === 'sql' && blocks[i + 1]?.language === 'result' ? [{ query: block.code, result: blocks[i + 1]?.code ?? '' }] : []));
const scripts = blocks.filter((block, i) => block.language === 'sql' && blocks[i + 1]?.language !== 'result');

describe('docs/sql.md', () => {
  it('has examples', () => {
    expect(queries.length).toBeGreaterThan(7);
    expect(scripts.length).toBeGreaterThan(3);
  });

  it.each(queries.map(({ query, result }) => [query.split('\n')[0] ?? '', query, result] as const))('%s… gives the result shown', (_, query, result) => {
    expect(runQuery(query, input)).toEqual(result.split('\n').filter((line) => line !== ''));
  });

  it.each(scripts.map(({ code }) => [code.split('\n')[0] ?? '', code] as const))('%s… parses', (_, code) => {
    expect(parseStatements(code).length).toBeGreaterThan(0);
  });

  it('plans the seed pipeline it shows, as examples/order-aggregation.sql', () => {
    const seed = scripts[0]?.code ?? '';
    expect(sqlPipeline(seed, { name: 'docs' }).name).toBe('order-aggregation-sql');
  });
});
