// The conformance suite's scenarios (one folder each: input.csv, the Flink job in Java, the
// Sluice pipeline in sluice.ts, and Flink's output in expected-by-flink.txt), how Sluice runs
// one, and how the Flink output's freshness is judged. No vitest here: run.ts uses it too.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataStream } from '../../lib/api/index.js';
import { OperatorTestHarness } from '../../lib/testing/index.js';
import type { Event } from './event.js';

export const CONFORMANCE_DIR = fileURLToPath(new URL('.', import.meta.url));
export const EXPECTED_FILE = 'expected-by-flink.txt';

export interface Scenario {
  readonly name: string;
  readonly folder: string;
  /** The Flink job's class, in dev.sluice.conformance: the folder's name in PascalCase. */
  readonly javaClass: string;
}

export function scenarios(): Scenario[] {
  return readdirSync(CONFORMANCE_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(CONFORMANCE_DIR, entry.name, 'input.csv')))
    .map(({ name }) => ({
      name,
      folder: join(CONFORMANCE_DIR, name),
      javaClass: name.replace(/(^|-)(\w)/g, (_, __, letter: string) => letter.toUpperCase()),
    }));
}

export type InputLine = { readonly event: Event } | { readonly watermark: number };

export function parseInput(scenario: Scenario): InputLine[] {
  return readFileSync(join(scenario.folder, 'input.csv'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line): InputLine => {
      const [kind, ...fields] = line.split(',');
      if (kind === 'watermark') return { watermark: Number(fields[0]) };
      const [key = '', value, timestamp] = fields;
      return { event: { key, value: Number(value), timestamp: Number(timestamp) } };
    });
}

/** One output record as both sides print it: `timestamp<TAB>value`. */
function line(timestamp: number | undefined, value: string): string {
  return `${timestamp ?? 'null'}\t${value}`;
}

/**
 * The scenario through Sluice's harness, fed as Flink's runner feeds its job: each record with
 * its event time, each watermark line as a watermark, and the final watermark at the end.
 */
export async function runOnSluice(scenario: Scenario): Promise<string[]> {
  const { default: build } = (await import(join(scenario.folder, 'sluice.ts'))) as { default: (events: DataStream<Event>) => DataStream<string> };
  const harness = OperatorTestHarness.of<Event, string>(build);
  for (const input of parseInput(scenario)) {
    if ('watermark' in input) harness.processWatermark(input.watermark);
    else harness.processElement(input.event, input.event.timestamp);
  }
  harness.processWatermark(Number.MAX_SAFE_INTEGER);
  return harness.output().map(({ value, timestamp }) => line(timestamp, value));
}

/** What Flink's output depends on: the runner, the build, and the scenario's job and input. */
export function inputsHash(scenario: Scenario): string {
  const hash = createHash('sha256');
  const runner = join(CONFORMANCE_DIR, 'runner');
  const files = [
    join(CONFORMANCE_DIR, 'pom.xml'),
    ...readdirSync(runner).sort().map((file) => join(runner, file)),
    ...readdirSync(scenario.folder)
      .filter((file) => file.endsWith('.java') || file === 'input.csv')
      .sort()
      .map((file) => join(scenario.folder, file)),
  ];
  for (const file of files) hash.update(file.slice(CONFORMANCE_DIR.length)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export interface ExpectedOutput {
  /** The hash of the inputs Flink ran on; stale when it differs from {@link inputsHash}. */
  readonly hash: string | undefined;
  readonly lines: string[];
}

export function expectedOutput(scenario: Scenario): ExpectedOutput {
  const file = join(scenario.folder, EXPECTED_FILE);
  if (!existsSync(file)) return { hash: undefined, lines: [] };
  const [header = '', ...lines] = readFileSync(file, 'utf8').split('\n');
  return { hash: /inputs sha256 ([0-9a-f]{64})/.exec(header)?.[1], lines: lines.filter((l) => l !== '') };
}

export function expectedFileText(hash: string, lines: readonly string[]): string {
  return `# Apache Flink 2.2's output (npm run conformance writes it), inputs sha256 ${hash}\n${lines.map((l) => `${l}\n`).join('')}`;
}
