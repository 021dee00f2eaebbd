// The broadcast state across a savepoint: each shard of the keyed stage keeps its own copy, and a
// restore gives each shard back its own, so that a shard whose references came before the
// savepoint still has them after it. The output must equal what a plain loop computes.
import { describe, expect, it } from 'vitest';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { BROADCAST_KEY } from '../../../lib/api/transformations.js';
import { planTopics } from '../../../lib/plan/topics.js';
import { listShards, shardRefOf } from '../../../lib/runtime/shard-record.js';
import { keyRef } from '../../../lib/state/keys.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { compareOutput, expectedOutput, SCHEDULE_KINDS } from '../../helpers/order-totals-kinds.js';
import { closingOrdersOnEveryPartition, generateOrders, type GeneratedOrder } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const PARTITIONS = 3;

async function produce(topic: string, orders: readonly GeneratedOrder[]) {
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  // Keyed by category with Kafka's default partitioner, as the source's setPartitionedByRecordKey() says,
  // which is also where a restore puts each category's state.
  await writer.write(orders.map(({ late: _late, ...o }) => ({ topic, key: o.category, value: JSON.stringify(o) })));
  await writer.flush();
  await writer.close();
}

describe('broadcast state', () => {
  it('is each shard’s own across a savepoint and its restore, and the output is exact', async () => {
    const name = uniqueName('broadcast');
    const input = `${name}-orders`;
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    const orders = generateOrders({ count: 1_200, seed: 91, categories: 6, lateFraction: 0 });
    const clock = { now: 1_000_000 };
    const start = () => {
      const runtime = new PipelineRuntime(
        orderTotalsPipeline({ name, input, brokers: testBrokers(), ...SCHEDULE_KINDS.broadcast }),
        { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
        { clock: () => clock.now },
      );
      return { runtime, driver: new LambdaDriver(runtime, clock) };
    };
    const one = start();
    await environment().admin.ensureTopics([
      { topic: input, partitions: PARTITIONS },
      { topic: `${name}-out`, partitions: 2 },
      ...planTopics(one.runtime.plan).repartitions.map(({ topic, partitions }) => ({ topic, partitions })),
    ]);
    await produce(input, orders.slice(0, 600));
    for (let round = 0; round < 3; round++) {
      await one.driver.drain();
      await one.driver.checkpoint();
    }
    await one.runtime.savepoint('half');
    await one.driver.close();
    await one.runtime.close();

    await produce(input, [...orders.slice(600), ...closingOrdersOnEveryPartition(orders, PARTITIONS)]);
    const two = start();
    await two.runtime.restore({ savepoint: 'half' }, () => clock.now);
    // Every shard of the keyed stage has its copy of the references back, not one shard all of them.
    const keyedShards = (await listShards(two.runtime.plan, environment().admin)).filter((target) => target.stageId === 'stage-2');
    expect(keyedShards).toHaveLength(2);
    for (const target of keyedShards) {
      const claim = await two.runtime.store.claim(shardRefOf(two.runtime.plan, target));
      const broadcastKey = keyRef(BROADCAST_KEY, two.runtime.plan.maxParallelism);
      const state = (await two.runtime.store.read(claim, [broadcastKey])).get(broadcastKey.serialized) ?? {};
      expect(Object.keys(Object.values(state)[0] ?? {}).length, `references in ${target.topic}/${target.partition}`).toBeGreaterThan(0);
    }
    for (let round = 0; round < 4; round++) {
      await two.driver.drain();
      await two.driver.checkpoint();
    }
    await two.driver.close();
    await two.runtime.close();

    const expected = expectedOutput('broadcast', orders);
    const written = (await consumeAll(`${name}-out`, { expected: expected.size })).map((m) => JSON.parse(m.value ?? '') as Total);
    expect(compareOutput('broadcast', written, expected)).toEqual([]);
  }, 240_000);
});
