import type { RequestCounts } from './request-metrics.js';
import { decodeKafkaEvent, type LambdaKafkaEvent } from './kafka-event.js';
import { runCoordinator, type CoordinatorOutcome } from '../runtime/coordinator.js';
import { commitCompletedCheckpoints, type CommitReport } from '../runtime/commit-function.js';
import { type ShardTarget } from '../runtime/shard-record.js';
import type { BatchReport } from '../runtime/processor.js';
import { nextRunInMs } from '../runtime/coordinator-loop.js';
import type { PipelineRuntime } from './runtime.js';

/** The coordinator's request to process a shard that received nothing: its time moves, it acknowledges. */
export interface TickEvent {
  readonly sluice: 'tick';
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
}

export function isTickEvent(event: unknown): event is TickEvent {
  return typeof event === 'object' && event !== null && (event as { sluice?: unknown }).sluice === 'tick';
}

/**
 * The processor function of one stage: each partition of a Kafka event (or a tick) in turn.
 * A failure fails the invocation, so that the trigger retries the whole batch; partitions
 * that committed before it skip their records then.
 */
export function processorHandler(runtime: PipelineRuntime, stageId: string) {
  const stage = runtime.plan.stages.find((s) => s.id === stageId);
  if (!stage) {
    throw new Error(
      `Pipeline ${runtime.plan.pipeline} has no ${stageId}; its stages are ${runtime.plan.stages.map((s) => s.id).join(', ')}`,
    );
  }
  return async (event: LambdaKafkaEvent | TickEvent): Promise<{ batches: BatchReport[] }> => {
    await runtime.deployment?.check();
    if (isTickEvent(event)) {
      return { batches: [await runtime.processor.processShard(event.stageId, event.topic, event.partition, [])] };
    }
    const batches: BatchReport[] = [];
    for (const { topic, partition, records } of decodeKafkaEvent(event).partitions) {
      batches.push(await runtime.processor.processShard(stageId, topic, partition, [...records]));
    }
    return { batches };
  };
}

/** What one coordinator run did, for its logs and metrics. */
export interface CoordinatorRunReport {
  readonly outcome: CoordinatorOutcome;
  readonly checkpoint: number;
  readonly requests: RequestCounts;
  /** Since the latest checkpoint completed: what the stalled-checkpoints alarm watches while the pipeline is awake. */
  readonly checkpointAgeMs: number;
  /** From the trigger of a checkpoint this run completed to its completion. */
  readonly checkpointDurationMs?: number;
  /** When the coordinator should run next ({@link nextRunInMs}). */
  readonly nextRunInMs: number;
}

/**
 * The coordinator function, on a schedule. `tick` runs the processor for an idle shard — on
 * AWS an asynchronous invocation of the stage's processor function — and `commit` starts the
 * commit function once a checkpoint completes.
 */
export function coordinatorHandler(
  runtime: PipelineRuntime,
  tick: (target: ShardTarget) => Promise<void>,
  commit: () => Promise<void>,
  clock: () => number = Date.now,
  { tickAfterMs }: { readonly tickAfterMs?: number } = {},
) {
  return async (): Promise<CoordinatorRunReport> => {
    const { plan, store, coordinator, snapshots } = runtime;
    const before = runtime.requests.snapshot();
    await runtime.deployment?.heartbeat();
    await runtime.topicsExist();
    const shards = await runtime.shards();
    const { schedule } = runtime;
    const { outcome, record } = await runCoordinator({
      plan,
      store,
      coordinator,
      shards,
      tick,
      clock,
      ...(tickAfterMs === undefined ? {} : { tickAfterMs }),
      ...(snapshots ? { snapshots } : {}),
      ...(schedule ? { schedule } : {}),
    });
    // Counted before the commit function starts (a separate function on AWS); ticks run in
    // the processor function, so in offline mode their requests land here too.
    const requests = runtime.requests.since(before);
    if (outcome === 'completed' || record.completed > record.committed) await commit();
    const now = clock();
    const checkpointAgeMs = now - record.completedAt;
    const next = nextRunInMs(record, plan.checkpointing, now, shards.length);
    if (outcome !== 'completed') return { outcome, checkpoint: record.triggered, requests, checkpointAgeMs, nextRunInMs: next };
    return { outcome, checkpoint: record.completed, requests, checkpointAgeMs, checkpointDurationMs: record.completedAt - record.triggeredAt, nextRunInMs: next };
  };
}

/** The commit function: commits what completed checkpoints cover. Safe to invoke by hand, and twice at once. */
export function commitHandler(runtime: PipelineRuntime) {
  return async (): Promise<CommitReport> => {
    const { plan, store, coordinator, committer, snapshots } = runtime;
    const shards = await runtime.shards();
    return commitCompletedCheckpoints({ plan, store, coordinator, committer, shards, ...(snapshots ? { snapshots } : {}) });
  };
}
