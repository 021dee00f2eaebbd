// A 5 MB record through the real broker, Lambda's event shape and the decoder, under
// BadRecordPolicy.skip(): the repartition record it would make is more than its topic takes, so
// it is a bad record of its own, skipped and counted, and every other order is counted exactly.
import { describe, expect, it } from 'vitest';
import { BadRecordPolicy, minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { pipelineStatus } from '../../../lib/runtime/status.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const NOTE_BYTES = 5 * 1024 * 1024;

describe('a 5 MB record under BadRecordPolicy.skip()', () => {
  it('is decoded from its Lambda event, skipped as too large for the repartition topic, and the rest counted exactly', async () => {
    const name = uniqueName('large');
    await environment().admin.ensureTopics([
      // The input takes a 5 MB record; the repartition topic keeps Kafka's default limit of about 1 MB.
      { topic: `${name}-orders`, partitions: 1, configs: { 'max.message.bytes': String(8 * 1024 * 1024) } },
      { topic: `${name}-keyBy-repartition`, partitions: 2 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    const orders = generateOrders({ count: 200, seed: 3, categories: 3 });
    const large = orders[100];
    if (!large) throw new Error('no order 100');
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      [...orders, ...closingOrders(orders, 1)].map(({ late: _late, ...order }) => ({
        topic: `${name}-orders`,
        partition: 0,
        key: order.category,
        value: JSON.stringify(order.orderId === large.orderId ? { ...order, note: 'n'.repeat(NOTE_BYTES) } : order),
      })),
    );
    await writer.close();

    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    const clock = { now: Date.now() };
    const runtime = new PipelineRuntime(
      // Unkeyed orders: the keyBy sends each order, note and all, through the repartition topic.
      orderTotalsPipeline({ name, input: `${name}-orders`, brokers: testBrokers(), window: minutes(5), badRecordPolicy: BadRecordPolicy.skip(), partitionedByRecordKey: false }),
      { tableName: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
      { clock: () => clock.now },
    );
    const driver = new LambdaDriver(runtime, clock);
    try {
      await driver.drain(50);
      await driver.checkpoint();
      await driver.drain(50);
      await driver.checkpoint();
      await driver.checkpoint();
      const status = await pipelineStatus(runtime);
      expect(status.shards.find((s) => s.stageId === 'stage-1')?.dropped).toEqual({ late: 0, skipped: 1, deadLettered: 0 });
    } finally {
      await driver.close();
      await runtime.close();
    }
    const expected = expectedTotals(
      orders.filter((order) => order !== large),
      minutes(5),
    );
    const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
    expect(new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]))).toEqual(expected);
    expect(consumed).toHaveLength(expected.size);
  }, 120_000);
});
