// What bench/run.ts hands each contender (as JSON in argv[2]), and what it prints back.
import type { OutputCommit } from '../../lib/api/index.js';
import { printResult, readJsonArgument } from '../child-io.js';

export interface ContenderConfig {
  readonly brokers: string[];
  readonly input: string;
  readonly output: string;
  readonly partitions: number;
  /** Input records, the closing orders included. */
  readonly records: number;
  /** Window sums the pipeline must write (closing categories aside). */
  readonly expectedWindows: number;
  readonly guarantee: 'NONE' | 'AT_LEAST_ONCE' | 'EXACTLY_ONCE';
  readonly checkpointIntervalMs: number;
  /** Sluice's: when EXACTLY_ONCE output becomes visible (default at checkpoints). */
  readonly outputCommit?: OutputCommit;
  readonly batchSize: number;
  /**
   * The input arrives while the contender runs (the latency runs): a contender that stops at
   * the end of what the topic held when it started must keep reading; the bench stops it.
   */
  readonly paced: boolean;
}

export interface ContenderResult {
  readonly elapsedMs: number;
  readonly outputs: number;
  /** AWS requests by operation (Sluice only). */
  readonly requests?: Record<string, number>;
  readonly checkpoints?: number;
}

export function readConfig(): ContenderConfig {
  return readJsonArgument('<contender> <config JSON>') as ContenderConfig;
}

/** Tells the bench that the contender reads its input now (the paced input starts then). */
export function ready(): void {
  process.stdout.write('READY\n');
}

export function report(result: ContenderResult): void {
  printResult(result);
}
