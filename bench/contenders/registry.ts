// The contenders and how to start each: Node scripts run through tsx, the Flink job from the
// jar `bench/flink` builds (with Maven, whenever its source is newer than the jar).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ContenderConfig } from './config.js';

export interface Contender {
  readonly name: string;
  readonly guarantee: ContenderConfig['guarantee'];
  /** Sluice's output commit, when not at checkpoints. */
  readonly outputCommit?: ContenderConfig['outputCommit'];
  /** Whether it writes window sums (checked against the expected ones) or copies records. */
  readonly sums: boolean;
  /** Whether it stops by itself on a paced input, once it has written everything (Flink's job runs on). */
  readonly stopsWhenPaced: boolean;
  command(config: ContenderConfig): string[];
}

const FLINK_DIR = 'bench/flink';
const FLINK_JAR = join(FLINK_DIR, 'target', 'flink-order-totals-1.0.0.jar');

function newestSource(directory: string): number {
  return Math.max(
    ...readdirSync(directory, { withFileTypes: true }).map((entry) => {
      const path = join(directory, entry.name);
      return entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    }),
  );
}

/** Builds the Flink job unless its jar is newer than its sources and pom. */
export function buildFlinkJob(say: (line: string) => void): void {
  const sources = Math.max(newestSource(join(FLINK_DIR, 'src')), statSync(join(FLINK_DIR, 'pom.xml')).mtimeMs);
  if (existsSync(FLINK_JAR) && statSync(FLINK_JAR).mtimeMs >= sources) return;
  say('Building the Flink job (Maven Central; dependencies are fetched on first use)...');
  execFileSync('mvn', ['-q', '-B', 'package', '-DskipTests'], { cwd: FLINK_DIR, stdio: 'inherit' });
}

const node = (script: string) => (config: ContenderConfig) => [process.execPath, '--import', 'tsx', script, JSON.stringify(config)];

/** The command that runs one of bench/flink's main classes, with its arguments. */
export const flinkCommand = (mainClass: string, ...args: string[]) => ['java', '-Xmx2g', '-cp', `${FLINK_JAR}:${join(FLINK_DIR, 'target', 'lib', '*')}`, mainClass, ...args];

const flink = (config: ContenderConfig) => [
  ...flinkCommand('dev.sluice.bench.OrderTotalsJob'),
  config.brokers.join(','),
  config.input,
  config.output,
  String(config.checkpointIntervalMs),
  String(config.partitions),
  config.guarantee,
  config.paced ? 'paced' : 'bounded',
];

export const RAW = 'kafkajs raw (no state, no guarantee)';
export const SLUICE_EO = 'Sluice EXACTLY_ONCE';
export const SLUICE_EO_PER_BATCH = 'Sluice EXACTLY_ONCE per batch';
export const FLINK_EO = 'Flink EXACTLY_ONCE';

export const contenders: readonly Contender[] = [
  { name: RAW, guarantee: 'NONE', sums: false, stopsWhenPaced: true, command: node('bench/contenders/kafkajs-raw.ts') },
  { name: 'kafkajs aggregate + transactions', guarantee: 'EXACTLY_ONCE', sums: true, stopsWhenPaced: true, command: node('bench/contenders/kafkajs-transactional.ts') },
  { name: 'Sluice NONE', guarantee: 'NONE', sums: true, stopsWhenPaced: true, command: node('bench/contenders/sluice.ts') },
  { name: 'Sluice AT_LEAST_ONCE', guarantee: 'AT_LEAST_ONCE', sums: true, stopsWhenPaced: true, command: node('bench/contenders/sluice.ts') },
  { name: SLUICE_EO, guarantee: 'EXACTLY_ONCE', sums: true, stopsWhenPaced: true, command: node('bench/contenders/sluice.ts') },
  {
    name: SLUICE_EO_PER_BATCH,
    guarantee: 'EXACTLY_ONCE',
    outputCommit: 'per-batch',
    sums: true,
    stopsWhenPaced: true,
    command: node('bench/contenders/sluice.ts'),
  },
  { name: 'Flink AT_LEAST_ONCE', guarantee: 'AT_LEAST_ONCE', sums: true, stopsWhenPaced: false, command: flink },
  { name: FLINK_EO, guarantee: 'EXACTLY_ONCE', sums: true, stopsWhenPaced: false, command: flink },
];

export function contender(name: string): Contender {
  const found = contenders.find((c) => c.name === name);
  if (!found) throw new Error(`No contender named ${name}`);
  return found;
}
