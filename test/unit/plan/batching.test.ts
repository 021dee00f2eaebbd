// The triggers' batching under a latency goal: the longest window that keeps it, from the
// stages and whether output waits for checkpoints.
import { describe, expect, it } from 'vitest';
import { OutputCommit, StreamExecutionEnvironment } from '../../../lib/api/index.js';
import { latencyGoalWindow, latencyShapeOf, worstLatencySeconds } from '../../../lib/plan/batching.js';
import { formatPlan } from '../../../lib/plan/explain.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';

const seed = (options: { outputCommit?: OutputCommit; partitionedByRecordKey?: boolean } = {}) =>
  orderTotalsPipeline({ name: 'totals', input: 'orders', brokers: ['127.0.0.1:9092'], window: 60_000, ...options });

describe('a latency goal', () => {
  it('bounds a record’s wait by the stages, each waiting for its batch, and at checkpoints for the next one and every shard’s acknowledgement', () => {
    // Two stages (the keyBy repartitions), checkpoints every 10 s gate the output and the repartition topic.
    const gated = latencyShapeOf(planPipeline(seed({ partitionedByRecordKey: false })));
    expect(gated).toEqual({ stages: 2, checkpointGatedIntervalSeconds: 10 });
    expect(worstLatencySeconds(gated, 0)).toBe(22);
    expect(worstLatencySeconds(gated, 2)).toBe(30);
    expect(latencyGoalWindow(gated, 30)).toBe(2);
    expect(latencyGoalWindow(gated, 31)).toBe(2);
    // Per-batch output commit: a stage waits for its batch alone.
    const perBatch = latencyShapeOf(planPipeline(seed({ partitionedByRecordKey: false, outputCommit: OutputCommit.PER_BATCH })));
    expect(perBatch).toEqual({ stages: 2, checkpointGatedIntervalSeconds: undefined });
    expect(latencyGoalWindow(perBatch, 30)).toBe(14);
    // Never past Lambda's 300 s.
    expect(latencyGoalWindow(perBatch, 10_000)).toBe(300);
  });

  it('sets the deployed window and batches of up to 10,000, and explain says so', () => {
    const env = seed({ partitionedByRecordKey: true }).setEventSourceMapping({ latencyGoalSeconds: 20 });
    const plan = planPipeline(env);
    // One stage at 10 s checkpoints: 11 s with no window, 2 windows a record.
    expect(plan.eventSourceMapping).toEqual({ latencyGoalSeconds: 20, batchSize: 10_000, maximumBatchingWindowSeconds: 4 });
    expect(formatPlan(plan)).toContain('triggers: batches of 10000, window 4 s (kept within a latency goal of 20 s), on-demand pollers');
    const capped = planPipeline(seed().setEventSourceMapping({ latencyGoalSeconds: 20, batchSize: 500 }));
    expect(capped.eventSourceMapping.batchSize).toBe(500);
  });

  it('fails planning when no window keeps it, naming the fixes', () => {
    const env = seed({ partitionedByRecordKey: false }).setEventSourceMapping({ latencyGoalSeconds: 15 });
    expect(() => planPipeline(env)).toThrow(
      'env.setEventSourceMapping: a latency goal of 15 s is below what this pipeline can keep: 2 stages, each waiting for a checkpoint every 10 s, ' +
        'take at least 22 s with no batching window. Raise latencyGoalSeconds to 22 or more, checkpoint more often (enableCheckpointing), ' +
        'or make output visible per batch (getCheckpointConfig().setOutputCommit(OutputCommit.PER_BATCH)).',
    );
  });

  it('is refused beside a window of its own, or at zero', () => {
    const env = () => StreamExecutionEnvironment.create({ name: 'p' });
    expect(() => env().setEventSourceMapping({ latencyGoalSeconds: 10, maximumBatchingWindowSeconds: 2 })).toThrow(
      'set latencyGoalSeconds or maximumBatchingWindowSeconds, not both: the goal sets the window',
    );
    expect(() => env().setEventSourceMapping({ latencyGoalSeconds: 0 })).toThrow('latencyGoalSeconds must be a number of seconds above 0, not 0');
  });
});
