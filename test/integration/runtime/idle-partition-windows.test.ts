// A stage keyed in place fires each shard's windows on its own partition's watermark. When a
// partition turns idle with a window open, its shard follows the stage's watermark over the
// active partitions, as Flink's window operator after a keyBy does, and the next stage waits for
// that window's result before it fires the minute: on the real broker, dynalite and s3rver.
import { describe, expect, it } from 'vitest';
import { minutes, seconds, TumblingEventTimeWindows } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { planTopics } from '../../../lib/plan/topics.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const MINUTE = minutes(1);

interface Order {
  readonly orderId: string;
  readonly category: string;
  readonly amount: number;
  readonly timestamp: number;
  readonly partition: number;
}

/** Each minute's top category, by a plain loop over the orders of the minutes a watermark has passed. */
function topCategories(orders: readonly Order[], watermark: number): Total[] {
  const sums = new Map<number, Map<string, number>>();
  for (const { category, amount, timestamp } of orders) {
    const windowStart = Math.floor(timestamp / MINUTE) * MINUTE;
    if (windowStart + MINUTE - 1 > watermark) continue;
    const minute = sums.get(windowStart) ?? new Map<string, number>();
    minute.set(category, (minute.get(category) ?? 0) + amount);
    sums.set(windowStart, minute);
  }
  return [...sums].map(([windowStart, categories]) => {
    const [category, amount] = [...categories].reduce((top, entry) => (entry[1] > top[1] ? entry : top));
    return { category, windowStart, amount };
  });
}

describe('a partition that turns idle with a window open', () => {
  it('fires that window as the other partitions move on, before the next stage fires the minute', async () => {
    const name = uniqueName('idle-window');
    const input = `${name}-orders`;
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    const idleness = seconds(30);
    const pipeline = orderTotalsPipeline({
      name,
      input,
      brokers: testBrokers(),
      window: MINUTE,
      idlenessMs: idleness,
      rest: (totals) => totals.keyBy((total) => total.windowStart).window(TumblingEventTimeWindows.of(MINUTE)).maxBy('amount'),
    });
    const clock = { now: Date.now() };
    const runtime = new PipelineRuntime(
      pipeline,
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => clock.now },
    );
    const [repartition] = planTopics(runtime.plan).repartitions;
    if (!repartition) throw new Error('the second keyBy repartitions');
    await environment().admin.ensureTopics([
      { topic: input, partitions: 2 },
      { topic: `${name}-out`, partitions: 1 },
      { topic: repartition.topic, partitions: repartition.partitions },
    ]);
    const driver = new LambdaDriver(runtime, clock);
    const start = Math.floor((Date.now() - minutes(30)) / MINUTE) * MINUTE;
    const order = (id: number, category: number, amount: number, offset: number): Order => ({
      orderId: `o-${id}`,
      category: `category-${category}`,
      amount,
      timestamp: start + offset,
      partition: category,
    });
    // Partition 0 sends the minute's larger total, then nothing more.
    const first = [order(1, 0, 200, seconds(5)), order(2, 1, 100, seconds(10)), order(3, 0, 300, seconds(20))];
    // Partition 1 goes on alone, well past the first minute and the out-of-orderness bound.
    const later = [order(4, 1, 50, minutes(2) + seconds(5)), order(5, 1, 70, minutes(5))];
    const produce = async (orders: readonly Order[]) => {
      const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
      await writer.write(orders.map(({ partition, ...o }) => ({ topic: input, partition, key: o.category, value: JSON.stringify(o) })));
      await writer.close();
    };
    try {
      await produce(first);
      await driver.drain();
      await driver.checkpoint();
      clock.now += idleness;
      await produce(later);
      for (let round = 0; round < 4; round++) {
        await driver.drain();
        await driver.checkpoint();
      }
    } finally {
      await driver.close();
      await runtime.close();
    }

    // Partition 1's watermark: its latest order less the 10-second bound, less one.
    const expected = topCategories([...first, ...later], start + minutes(5) - seconds(10) - 1);
    expect(expected).toEqual([
      { category: 'category-0', windowStart: start, amount: 500 },
      { category: 'category-1', windowStart: start + minutes(2), amount: 50 },
    ]);
    const written = await consumeAll(`${name}-out`, { expected: expected.length });
    expect(written.map((m) => JSON.parse(m.value ?? '') as Total).sort((a, b) => a.windowStart - b.windowStart)).toEqual(expected);
  }, 120_000);
});
