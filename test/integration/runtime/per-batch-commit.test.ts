// When an EXACTLY_ONCE sink's output becomes visible to read_committed consumers, on the real
// broker, dynalite and s3rver: with OutputCommit.PER_BATCH as soon as the invocation that wrote
// it returns, before any checkpoint; at checkpoints (the default) only once the checkpoint that
// covers it commits. An invocation that dies between its shard commit and its own transaction's
// commit leaves that transaction to the shard's next invocation, which commits it first.
import { describe, expect, it } from 'vitest';
import { minutes, OutputCommit, seconds } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { PipelineRuntime, type RuntimeOptions } from '../../../lib/aws/runtime.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const MINUTE = minutes(1);
/** The pipeline's bound on out-of-orderness (test/helpers/pipelines.ts). */
const OUT_OF_ORDERNESS = seconds(10);

interface Order {
  readonly orderId: string;
  readonly category: string;
  readonly amount: number;
  readonly timestamp: number;
}

/** Each category's sum per minute, for the minutes a watermark has passed: a plain loop. */
function closedTotals(orders: readonly Order[], watermark: number): Total[] {
  const sums = new Map<string, Total>();
  for (const { category, amount, timestamp } of orders) {
    const windowStart = Math.floor(timestamp / MINUTE) * MINUTE;
    if (windowStart + MINUTE - 1 > watermark) continue;
    const id = `${category}@${windowStart}`;
    sums.set(id, { category, windowStart, amount: (sums.get(id)?.amount ?? 0) + amount });
  }
  return sortedTotals([...sums.values()]);
}

function sortedTotals(totals: readonly Total[]): Total[] {
  return [...totals].sort((a, b) => a.windowStart - b.windowStart || a.category.localeCompare(b.category));
}

/** One partition of orders, a pipeline of minute sums, and a read_committed look at its output that does not wait. */
async function setUp(outputCommit: OutputCommit, options: RuntimeOptions = {}) {
  const name = uniqueName(`visible-${outputCommit}`);
  const input = `${name}-orders`;
  await ensureStateTable(createDocumentClient(environment().dynamo), name);
  await ensureBucket(createS3Client(environment().s3), name);
  await environment().admin.ensureTopics([
    { topic: input, partitions: 1 },
    { topic: `${name}-out`, partitions: 1 },
  ]);
  const clock = { now: Date.now() };
  const runtime = new PipelineRuntime(
    orderTotalsPipeline({ name, input, brokers: testBrokers(), window: MINUTE, outputCommit }),
    { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
    { clock: () => clock.now, ...options },
  );
  const driver = new LambdaDriver(runtime, clock);
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  const start = Math.floor((Date.now() - minutes(30)) / MINUTE) * MINUTE;
  const produce = async (orders: readonly Order[]) => {
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(orders.map((o) => ({ topic: input, partition: 0, key: o.category, value: JSON.stringify(o) })));
    await writer.close();
  };
  const output = `${name}-out`;
  const readCommitted = async () => {
    const { records, next } = await reader.readAvailable(output, 0, 0, 1_000);
    return { totals: sortedTotals(records.map((r) => JSON.parse(r.value?.toString('utf8') ?? '') as Total)), next };
  };
  /**
   * What read_committed readers see once no transaction is open on the output. A commit returns
   * once the transaction coordinator has logged it; the partition learns of it from a marker
   * sent after, so its records become readable a moment later.
   */
  const settledOutput = async () => {
    await expect.poll(async () => (await readCommitted()).next === (await reader.logEnd(output, 0)), { timeout: 10_000, interval: 50 }).toBe(true);
    return (await readCommitted()).totals;
  };
  /** Nothing readable, though records were written: they wait in an open transaction. */
  const writtenButInvisible = async () => {
    expect(await reader.logEnd(output, 0)).toBeGreaterThan(0);
    expect((await readCommitted()).totals).toEqual([]);
  };
  const close = async () => {
    await reader.close();
    await driver.close();
    await runtime.close();
  };
  return { runtime, driver, start, produce, settledOutput, writtenButInvisible, close };
}

/** `count` orders from the `from`th on, ten seconds apart from `start`, alternating two categories. */
function ordersOver(start: number, from: number, count: number): Order[] {
  return Array.from({ length: count }, (_, i) => ({
    orderId: `o-${from + i}`,
    category: `category-${(from + i) % 2}`,
    amount: 10 + ((from + i) % 7),
    timestamp: start + (from + i) * seconds(10),
  }));
}

const watermarkAfter = (orders: readonly Order[]) => Math.max(...orders.map((o) => o.timestamp)) - OUT_OF_ORDERNESS - 1;

describe('when EXACTLY_ONCE output becomes visible', () => {
  it('per batch: as soon as the invocation returns, with no checkpoint committed', async () => {
    const { runtime, driver, start, produce, settledOutput, close } = await setUp(OutputCommit.PER_BATCH);
    try {
      const orders = ordersOver(start, 0, 24);
      await produce(orders);
      await driver.drain();
      const expected = closedTotals(orders, watermarkAfter(orders));
      expect(expected.length).toBeGreaterThanOrEqual(4);
      expect(await settledOutput()).toEqual(expected);
      expect((await runtime.coordinator.get()).committed).toBe(0);
      // The checkpoint that covers it finds it committed, and writes nothing twice.
      await driver.checkpoint();
      expect(await settledOutput()).toEqual(expected);
    } finally {
      await close();
    }
  }, 120_000);

  it('at checkpoints: only once the checkpoint that covers it commits', async () => {
    const { driver, start, produce, settledOutput, writtenButInvisible, close } = await setUp(OutputCommit.ON_CHECKPOINT);
    try {
      const orders = ordersOver(start, 0, 24);
      await produce(orders);
      await driver.drain();
      await writtenButInvisible();
      await driver.checkpoint();
      expect(await settledOutput()).toEqual(closedTotals(orders, watermarkAfter(orders)));
    } finally {
      await close();
    }
  }, 120_000);

  it('per batch: a transaction left by an invocation that died after its shard commit is committed by the next, before its own', async () => {
    let crashes = 1;
    const { driver, start, produce, settledOutput, writtenButInvisible, close } = await setUp(OutputCommit.PER_BATCH, {
      onStep: (step) => {
        if (step === 'committed' && crashes-- > 0) throw new Error('injected crash after the shard commit');
      },
    });
    try {
      const first = ordersOver(start, 0, 24);
      await produce(first);
      await expect(driver.drain()).rejects.toThrow('injected crash');
      // Durable in the shard record, but its transaction is still open.
      await writtenButInvisible();
      const second = ordersOver(start, 24, 12);
      await produce(second);
      await driver.drain();
      const all = [...first, ...second];
      expect(await settledOutput()).toEqual(closedTotals(all, watermarkAfter(all)));
      await driver.checkpoint();
      expect(await settledOutput()).toEqual(closedTotals(all, watermarkAfter(all)));
    } finally {
      await close();
    }
  }, 120_000);
});
