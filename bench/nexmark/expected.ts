// Flink's results of the Nexmark queries on a small, fixed set of events, kept beside the queries
// (bench/nexmark/expected/qN.txt) so that `npm test` compares Sluice's with them without a JVM.
// `npm run nexmark -- --expected write` makes them on Flink 2.2; `--expected check`, which CI
// runs, makes them again and fails if Flink's differ from those kept.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_NEXMARK } from './generator.js';
import { querySql, type NexmarkQuery } from './queries.js';

/** Events of the kept results: enough for every query to write rows, few enough for `npm test`. */
export const EXPECTED_EVENTS = 2_000;
/**
 * A slow event rate, so that the few events span 40 s of event time and sessions of 10 s close
 * between bids; and a seed whose hot seller lives in CA, so that q3 finds sellers to suggest.
 */
export const EXPECTED_GENERATOR = { ...DEFAULT_NEXMARK, eventsPerSecond: 50, seed: 3 };

export interface ExpectedResult {
  /** The inputs the result was made from: the generator's options, the event count, the query. */
  readonly hash: string;
  readonly rows: readonly string[];
}

export function expectedPath(query: NexmarkQuery): string {
  return fileURLToPath(new URL(`expected/${query}.txt`, import.meta.url));
}

export function inputsHash(query: NexmarkQuery): string {
  return createHash('sha256').update(JSON.stringify({ generator: EXPECTED_GENERATOR, events: EXPECTED_EVENTS, query: querySql(query) })).digest('hex');
}

export function readExpected(query: NexmarkQuery): ExpectedResult | undefined {
  const path = expectedPath(query);
  if (!existsSync(path)) return undefined;
  const [header = '', ...rows] = readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');
  return { hash: /sha256 ([0-9a-f]+)/.exec(header)?.[1] ?? '', rows };
}

export function writeExpected(query: NexmarkQuery, rows: readonly string[]): void {
  const header = `# Apache Flink 2.2's result of Nexmark ${query} on ${EXPECTED_EVENTS.toLocaleString('en')} events (npm run nexmark -- --expected write), inputs sha256 ${inputsHash(query)}`;
  writeFileSync(expectedPath(query), `${[header, ...rows].join('\n')}\n`);
}
