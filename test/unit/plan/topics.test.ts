import { describe, expect, it } from 'vitest';
import { planPipeline } from '../../../lib/plan/planner.js';
import { planTopics } from '../../../lib/plan/topics.js';
import { SCHEDULE_KINDS } from '../../helpers/order-totals-kinds.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';

describe('planTopics', () => {
  it('lists the topics a two-stage plan reads and writes: sources, sinks and repartitions', () => {
    const plan = planPipeline(orderTotalsPipeline({ name: 'totals', input: 'orders', brokers: ['127.0.0.1:1'], ...SCHEDULE_KINDS['two-stage'] }));
    expect(planTopics(plan)).toEqual({
      sources: ['orders'],
      sourcePatterns: [],
      sinks: ['totals-out'],
      repartitions: [{ topic: 'totals-keyBy-2-repartition', partitions: 2 }],
      deadLetters: [],
    });
  });
});
