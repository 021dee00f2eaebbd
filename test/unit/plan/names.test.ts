// The names a pipeline takes on the brokers: a deployment stage gives every one of them its own.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { configFromEnvironment } from '../../../lib/aws/runtime.js';
import { consumerGroupOf, transactionalIdPrefixOf } from '../../../lib/plan/names.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { Processor } from '../../../lib/runtime/processor.js';
import { MemoryCoordinatorStore } from '../../../lib/state/coordinator-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import { KafkaTwin } from '../../../lib/testing/kafka-twin.js';
import seed from '../../../examples/order-aggregation.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { appendOrders } from '../../helpers/twins.js';

describe('broker-side names', () => {
  it('carry the deployment stage: consumer groups, transactional ids, repartition topics', () => {
    const names = (deploymentStage?: string) => {
      const plan = planPipeline(seed, { deploymentStage });
      return {
        repartition: plan.stages.map((stage) => (stage.input.kind === 'repartition' ? stage.input.topic : undefined)),
        groups: plan.stages.map((stage) => consumerGroupOf(plan, stage)),
        transactions: plan.stages.map((stage) => transactionalIdPrefixOf(plan, stage)),
      };
    };
    expect(names()).toEqual({
      repartition: [undefined, 'order-aggregation-keyBy-repartition'],
      groups: ['order-aggregation', 'order-aggregation-stage-2'],
      transactions: ['order-aggregation-tx-stage-1', 'order-aggregation-tx-stage-2'],
    });
    expect(names('prod')).toEqual({
      repartition: [undefined, 'order-aggregation-prod-keyBy-repartition'],
      groups: ['order-aggregation-prod', 'order-aggregation-prod-stage-2'],
      transactions: ['order-aggregation-tx-prod-stage-1', 'order-aggregation-tx-prod-stage-2'],
    });
  });

  it('reach the functions through SLUICE_DEPLOYMENT_STAGE, which must be a name part', () => {
    const env = { SLUICE_STATE_TABLE: 't', SLUICE_SNAPSHOT_BUCKET: 'b', KAFKA_BROKERS: '127.0.0.1:9092' };
    expect(configFromEnvironment({ ...env, SLUICE_DEPLOYMENT_STAGE: 'prod' }).deploymentStage).toBe('prod');
    expect(configFromEnvironment(env).deploymentStage).toBeUndefined();
    expect(() => configFromEnvironment({ ...env, SLUICE_DEPLOYMENT_STAGE: 'prod eu' })).toThrow(
      'The deployment stage "prod eu" must be 1 to 32 letters, digits or dashes: it becomes part of topic, group and transactional-id names',
    );
  });

  it('are the ones the processor writes its transactions under', async () => {
    const clock = () => Date.UTC(2026, 11, 2, 9, 0, 0);
    const kafka = new KafkaTwin({ clock });
    const plan = planPipeline(orderTotalsPipeline({ name: 'named', input: 'orders', brokers: ['127.0.0.1:1'], window: minutes(1) }), { deploymentStage: 'prod' });
    kafka.createTopic('orders', 1);
    kafka.createTopic('named-out', 1);
    const processor = new Processor({ plan, store: new MemoryShardStore(), coordinator: new MemoryCoordinatorStore(), kafka, clock });
    const order = (id: number, timestamp: number) => ({ orderId: `o-${id}`, category: 'books', amount: 1, timestamp });
    appendOrders(kafka, [order(1, clock() - 600_000), order(2, clock())]);
    const records = await kafka.reader.read({ topic: 'orders', partition: 0, from: 0, to: 2 });
    const report = await processor.processShard('stage-1', 'orders', 0, records);
    expect(report.transaction?.transactionalId).toBe('named-tx-prod-stage-1-orders-0-1');
  });
});
