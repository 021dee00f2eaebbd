// The scaling curves: Sluice EXACTLY_ONCE's throughput against batch size and against the
// number of partitions (each a run over a pre-loaded input), and checkpoint duration against
// total state size (bench/state-size.ts, one process per size).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseResult } from './child-io.js';
import type { StateSizeConfig, StateSizeResult } from './state-size.js';

export interface CurvePoint {
  readonly x: number;
  readonly recordsPerCore: number;
  readonly recordsPerSecond: number;
  readonly check: string;
}

/** Runs bench/state-size.ts for one state size and returns what it measured. */
export async function measureStateSize(config: StateSizeConfig): Promise<StateSizeResult> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/state-size.ts', JSON.stringify(config)], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const result = parseResult(stdout) as StateSizeResult | undefined;
  if (!result) throw new Error(`bench/state-size.ts printed no result for ${config.keys} keys:\n${stdout.slice(-2_000)}`);
  return result;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
