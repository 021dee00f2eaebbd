import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../../../lib/api/index.js';
import { costModel } from '../../../lib/cost/model.js';
import { pipelineCost, REFERENCE_FIGURES } from '../../../lib/cost/pipeline-cost.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { orderAggregation } from '../../../examples/order-aggregation.js';

describe('the modelled cost of a pipeline', () => {
  const plan = planPipeline(orderAggregation({ name: 'costed', partitionedByCategory: false }));

  it('counts every stage as a processor over every record, and the coordinator once', () => {
    expect(plan.stages).toHaveLength(2);
    const { inputs, row } = pipelineCost(plan, { rate: 10_000 });
    const oneStage = costModel({ ...inputs, stages: 1 }, [10_000])[0];
    expect(row.sluice.lambda).toBeCloseTo(2 * (oneStage?.sluice.lambda ?? 0), 12);
    expect(row.sluice.s3).toBeCloseTo(2 * (oneStage?.sluice.s3 ?? 0), 12);
    expect(row.sluice.coordinator).toBeCloseTo(oneStage?.sluice.coordinator ?? 0, 12);
    expect(inputs).toMatchObject({ checkpointIntervalS: 60, shards: 4, maxBatchSize: 10_000, batchingWindowS: 1, flinkRecordsPerCpuSecond: REFERENCE_FIGURES.flinkRecordsPerCpuSecond });
  });

  it("takes the batch the pipeline's triggers set, and Lambda's 6 MB for large records", () => {
    const env = orderAggregation({ name: 'costed-small-batches', partitionedByCategory: false }).setEventSourceMapping({ batchSize: 100, maximumBatchingWindowSeconds: 5 });
    expect(pipelineCost(planPipeline(env), { rate: 100_000 }).row.batchSize).toBe(100);
    expect(pipelineCost(plan, { rate: 100_000, recordBytes: 4_096 }).row.batchSize).toBe(1_536);
    expect(pipelineCost(plan, { rate: 1_000, shards: 1 }).row.batchSize).toBe(1_000);
  });

  it('takes the window a latency goal sets', () => {
    // Two stages checkpointing every 60 s take 122 s with no window; 150 s leaves four windows of 7 s.
    const env = orderAggregation({ name: 'costed-goal', partitionedByCategory: false }).setEventSourceMapping({ latencyGoalSeconds: 150 });
    const { inputs, row } = pipelineCost(planPipeline(env), { rate: 1_000 });
    expect(inputs.batchingWindowS).toBe(7);
    expect(row.batchSize).toBe(1_750);
  });

  it('keeps a window of 0 s from making batches of nothing', () => {
    const env: StreamExecutionEnvironment = orderAggregation({ name: 'costed-no-window', partitionedByCategory: false }).setEventSourceMapping({ maximumBatchingWindowSeconds: 0 });
    expect(pipelineCost(planPipeline(env), { rate: 1_000 }).row.batchSize).toBe(25);
  });
});
