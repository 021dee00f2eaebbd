import { OutputCommit, type EventSourceMappingOptions } from '../api/environment.js';
import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import type { Plan } from './plan.js';

/** Lambda's largest batch: with a latency goal, the window alone bounds a batch's wait, and batches grow with the rate up to it. */
const MAX_BATCH_SIZE = 10_000;
/** Lambda's longest batching window. */
const MAX_WINDOW_SECONDS = 300;
/** What a stage adds beyond its waits: a batch's processing and commit, and a checkpoint's completion and commit. */
export const STAGE_ALLOWANCE_SECONDS = 1;

/** What bounds an output record's latency, stage by stage (see {@link latencyGoalWindow}). */
export interface LatencyShape {
  readonly stages: number;
  /** The checkpoint interval when output (and every repartition topic between stages) becomes visible at checkpoints; else undefined. */
  readonly checkpointGatedIntervalSeconds: number | undefined;
}

export function latencyShapeOf(plan: Pick<Plan, 'stages' | 'checkpointing' | 'internalGuarantee'>): LatencyShape {
  const gated = plan.internalGuarantee === DeliveryGuarantee.EXACTLY_ONCE && plan.checkpointing.outputCommit === OutputCommit.ON_CHECKPOINT;
  return { stages: plan.stages.length, checkpointGatedIntervalSeconds: gated ? plan.checkpointing.intervalMs / 1_000 : undefined };
}

/**
 * The longest record wait, as a function of the batching window `W`: each stage waits for its
 * batch (W) and its processing and commit; at checkpoints, its output then waits for the next
 * checkpoint (the interval) and for every shard's acknowledgement, which comes with each shard's
 * next batch (W again), before the next stage or a consumer reads it.
 */
export function worstLatencySeconds(shape: LatencyShape, windowSeconds: number): number {
  const interval = shape.checkpointGatedIntervalSeconds;
  const stage = interval === undefined ? windowSeconds + STAGE_ALLOWANCE_SECONDS : 2 * windowSeconds + interval + STAGE_ALLOWANCE_SECONDS;
  return shape.stages * stage;
}

/**
 * The whole-second batching window that keeps {@link worstLatencySeconds} within `goalSeconds`;
 * throws, naming the fixes, when even no window does.
 */
export function latencyGoalWindow(shape: LatencyShape, goalSeconds: number): number {
  const least = worstLatencySeconds(shape, 0);
  const interval = shape.checkpointGatedIntervalSeconds;
  if (least > goalSeconds) {
    const why =
      interval === undefined
        ? `${shape.stages} stage${shape.stages === 1 ? '' : 's'} take at least ${least} s with no batching window`
        : `${shape.stages} stage${shape.stages === 1 ? '' : 's'}, each waiting for a checkpoint every ${interval} s, take at least ${least} s with no batching window`;
    throw new Error(
      `env.setEventSourceMapping: a latency goal of ${goalSeconds} s is below what this pipeline can keep: ${why}. ` +
        `Raise latencyGoalSeconds to ${least} or more` +
        (interval === undefined ? '.' : `, checkpoint more often (enableCheckpointing), or make output visible per batch (getCheckpointConfig().setOutputCommit(OutputCommit.PER_BATCH)).`),
    );
  }
  const windowsPerRecord = interval === undefined ? shape.stages : 2 * shape.stages;
  return Math.min(MAX_WINDOW_SECONDS, Math.floor((goalSeconds - least) / windowsPerRecord));
}

/**
 * The triggers' batching as deployed: with a latency goal, the window that keeps it and
 * batches of up to Lambda's 10,000 (unless the pipeline sets fewer), so that a batch's fixed
 * requests are spread over as many records as the goal allows; otherwise as set.
 */
export function resolvedEventSourceMapping(options: EventSourceMappingOptions, shape: LatencyShape): EventSourceMappingOptions {
  if (options.latencyGoalSeconds === undefined) return options;
  return {
    ...options,
    batchSize: options.batchSize ?? MAX_BATCH_SIZE,
    maximumBatchingWindowSeconds: latencyGoalWindow(shape, options.latencyGoalSeconds),
  };
}
