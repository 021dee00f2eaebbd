// Restoring checkpoints and savepoints, and rescaling: a pipeline stopped, restored and run
// again — into a source topic grown from 4 to 8 partitions, and back into a topic of 4 —
// writes exactly what an uninterrupted run writes, read back with read_committed.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { createRecordWriter, partitionForKey } from '../../../lib/kafka/index.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { closingOrdersOnEveryPartition, expectedTotals, generateOrders, type GeneratedOrder } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const WINDOW = minutes(5);

/** Writes orders keyed by category with Kafka's default partitioner, as a producing application would. */
async function produce(topic: string, orders: readonly GeneratedOrder[]) {
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await writer.write(orders.map(({ late: _late, ...o }) => ({ topic, key: o.category, value: JSON.stringify(o) })));
  await writer.flush();
  await writer.close();
}

async function setUp(prefix: string) {
  const name = uniqueName(prefix);
  await ensureStateTable(createDocumentClient(environment().dynamo), name);
  await ensureBucket(createS3Client(environment().s3), name);
  await environment().admin.ensureTopics([{ topic: `${name}-out`, partitions: 2 }]);
  const clock = { now: 1_000_000 };
  const start = (input: string) => {
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name, input, brokers: testBrokers(), window: WINDOW }),
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => clock.now },
    );
    return { runtime, driver: new LambdaDriver(runtime, clock) };
  };
  const output = async (expected: Map<string, number>) => {
    const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
    const written = consumed.map((m) => JSON.parse(m.value ?? '') as Total).filter((t) => !t.category.startsWith('closing-'));
    const keys = written.map((t) => `${t.category}@${t.windowStart}`);
    expect(new Set(keys).size, 'no total written twice').toBe(keys.length);
    return new Map(written.map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
  };
  return { name, clock, start, output };
}

/** How many packs of keyed state the state table holds. */
async function scanPacks(table: string): Promise<number> {
  const client = createDocumentClient(environment().dynamo);
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: table, FilterExpression: 'begins_with(pk, :key)', ExpressionAttributeValues: { ':key': 'pack#' }, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

describe('restore and rescale', () => {
  it('a savepoint restored into a source grown from 4 to 8 partitions, then into another topic of 4, gives the uninterrupted output', async () => {
    const { name, start, output, clock } = await setUp('rescale');
    const orders = generateOrders({ count: 4_500, seed: 77, categories: 12, lateFraction: 0 });
    const [first, second, third] = [orders.slice(0, 1_500), orders.slice(1_500, 3_000), orders.slice(3_000)];
    const categories = [...new Set(orders.map((o) => o.category))];
    expect(categories.filter((c) => partitionForKey(c, 4) !== partitionForKey(c, 8)).length, 'keys that change shard').toBeGreaterThan(2);
    const grown = `${name}-orders`;
    const narrowed = `${name}-orders-4`;
    await environment().admin.ensureTopics([
      { topic: grown, partitions: 4 },
      { topic: narrowed, partitions: 4 },
    ]);

    await produce(grown, first);
    const one = start(grown);
    await one.driver.drain();
    await one.driver.checkpoint();
    expect(await one.runtime.savepoint('four')).toMatchObject({ key: 'savepoints/four/manifest.json' });
    await one.driver.close();
    await one.runtime.close();

    await environment().admin.addPartitions(grown, 8);
    await produce(grown, second);
    const two = start(grown);
    const fromFour = await two.runtime.restore({ savepoint: 'four' }, () => clock.now);
    expect(fromFour.shards).toBe(8);
    expect(fromFour.keys).toBeGreaterThan(0);
    expect(await two.driver.drain()).toBeGreaterThanOrEqual(second.length);
    await two.driver.checkpoint();
    await two.runtime.savepoint('eight');
    await two.driver.close();
    await two.runtime.close();

    await produce(narrowed, [...third, ...closingOrdersOnEveryPartition(third, 4)]);
    const three = start(narrowed);
    const fromEight = await three.runtime.restore({ savepoint: 'eight' }, () => clock.now);
    expect(fromEight.shards).toBe(4);
    await three.driver.drain();
    await three.driver.checkpoint();
    await three.driver.close();
    await three.runtime.close();

    expect(await output(expectedTotals(orders, WINDOW))).toEqual(expectedTotals(orders, WINDOW));
  }, 240_000);

  it('restoring the last checkpoint drops what was processed after it, and the rerun gives the uninterrupted output', async () => {
    const { name, start, output, clock } = await setUp('restore');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([{ topic: input, partitions: 4 }]);
    const orders = generateOrders({ count: 3_000, seed: 78, categories: 12, lateFraction: 0 });
    await produce(input, orders.slice(0, 1_500));

    const { runtime, driver } = start(input);
    await driver.drain();
    const checkpoint = await driver.checkpoint();
    // More input is processed, its transactions pre-committed, but no checkpoint covers them.
    await produce(input, [...orders.slice(1_500), ...closingOrdersOnEveryPartition(orders, 4)]);
    await driver.drain();
    await driver.close();
    await runtime.close();

    const again = start(input);
    const report = await again.runtime.restore({ checkpoint }, () => clock.now);
    expect(report.checkpoint).toBeGreaterThan(checkpoint);
    expect(report.transactionsAborted).toBeGreaterThan(0);
    await again.driver.drain();
    await again.driver.checkpoint();
    await again.driver.close();
    await again.runtime.close();

    expect(await output(expectedTotals(orders, WINDOW))).toEqual(expectedTotals(orders, WINDOW));
  }, 240_000);

  it('refuses to rescale while an old partition holds unread records of a key that would move, and changes nothing', async () => {
    const { name, start, clock } = await setUp('stranded');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([{ topic: input, partitions: 4 }]);
    const orders = generateOrders({ count: 600, seed: 79, categories: 12, lateFraction: 0 });
    await produce(input, orders.slice(0, 300));
    const one = start(input);
    await one.driver.drain();
    await one.driver.checkpoint();
    await one.runtime.savepoint('before');
    await one.driver.close();
    await one.runtime.close();
    // Written before the partitions are added, and read by no snapshot.
    await produce(input, orders.slice(300));
    await environment().admin.addPartitions(input, 8);

    const two = start(input);
    const packs = () => scanPacks(name);
    const before = { record: await two.runtime.coordinator.get(), packs: await packs() };
    expect(before.packs).toBeGreaterThan(0);
    const stuck = two.runtime.restore({ savepoint: 'before' }, () => clock.now);
    await expect(stuck).rejects.toThrow(/partition \d holds a record at offset \d+, after the snapshot's stage-1 had read it \(offset \d+\), whose key belongs to another partition now that .* has 8/);
    expect({ record: await two.runtime.coordinator.get(), packs: await packs() }, 'the refused restore left the pipeline as it was').toEqual(before);
    await two.driver.close();
    await two.runtime.close();
  }, 120_000);
});
