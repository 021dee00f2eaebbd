import { nextCheckpointDueAt, type CheckpointTiming, type CoordinatorRecord } from '../state/coordinator-store.js';

/**
 * How often the coordinator runs at most apart: a quarter of the checkpoint interval, between
 * 100 ms and 1 s. It runs sooner when it has something to do ({@link nextRunInMs}).
 */
export function coordinatorPeriodMs(checkpointIntervalMs: number): number {
  return Math.min(1_000, Math.max(100, checkpointIntervalMs / 4));
}

/**
 * How often the coordinator looks again while a checkpoint is in flight: every 25 ms, so that it
 * completes soon after its last shard acknowledges it, or every millisecond per shard for more
 * than 25 shards, up to 100 ms, since each look reads every shard record: at most about a
 * thousand reads a second, for the fraction of a second a checkpoint is in flight.
 */
export function completionPollMs(shardCount: number): number {
  return Math.min(100, Math.max(25, shardCount));
}

/**
 * When the coordinator should run next, within its period: every {@link completionPollMs}
 * while a checkpoint is in flight, and otherwise when the next checkpoint is due, so that it is
 * triggered on time. Neither waits for the period, which would add up to a period each to the
 * latency of EXACTLY_ONCE output.
 */
export function nextRunInMs(record: CoordinatorRecord, checkpointing: CheckpointTiming, now: number, shardCount: number): number {
  const period = coordinatorPeriodMs(checkpointing.intervalMs);
  if (record.asleep === true || checkpointing.intervalMs <= 0) return period;
  if (record.triggered > record.completed) return Math.min(period, completionPollMs(shardCount));
  return Math.min(period, Math.max(0, nextCheckpointDueAt(record, checkpointing) - now));
}

export interface CoordinatorLoopOptions {
  /** The longest wait between two runs. */
  readonly periodMs: number;
  /** How long to keep running the coordinator: the invocation's share of its schedule. */
  readonly runForMs: number;
  /** The time the invocation has left (Lambda's context), when known: the loop stops a period before it runs out. */
  readonly remainingMs?: () => number;
  readonly clock?: () => number;
}

/** A coordinator run after which the invocation ends early: the pipeline has gone to rest, and its schedule is off. */
export function resting(result: { readonly outcome: string }): boolean {
  return result.outcome === 'asleep';
}

/**
 * Runs the coordinator for `runForMs`, each run at most `periodMs` after the previous one began,
 * sooner when the run says so (`nextRunInMs`): a scheduled Lambda function can be started at
 * most once a minute, and a checkpoint needs a run to trigger it and another to complete it, so
 * one run per invocation would stretch every checkpoint to minutes.
 */
export async function repeatCoordinator<R extends { readonly outcome: string; readonly nextRunInMs?: number }>(
  run: () => Promise<R>,
  options: CoordinatorLoopOptions,
  onRun: (result: R) => void,
): Promise<{ runs: number; last: R }> {
  const clock = options.clock ?? Date.now;
  const started = clock();
  let runs = 0;
  for (;;) {
    const periodEnds = clock() + options.periodMs;
    const last = await run();
    runs++;
    onRun(last);
    if (resting(last)) return { runs, last };
    const next = Math.min(periodEnds, clock() + (last.nextRunInMs ?? options.periodMs));
    const remaining = options.remainingMs?.() ?? Number.POSITIVE_INFINITY;
    if (next - started + options.periodMs > options.runForMs || remaining < 2 * options.periodMs + (next - clock())) return { runs, last };
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - clock())));
  }
}
