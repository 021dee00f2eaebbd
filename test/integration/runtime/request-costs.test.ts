// What a batch and a checkpoint cost in AWS requests — the bill of a deployed pipeline —
// counted from the SDK clients against dynalite and s3rver: a fixed number per batch plus one
// write per pack of changed keys (never more than one per key), whatever the number of records, and a fixed number per checkpoint
// plus one read per shard, whatever the total state.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import { coordinatorHandler, commitHandler, processorHandler } from '../../../lib/aws/handlers.js';
import type { RequestSpan } from '../../../lib/aws/request-metrics.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { runtimeProgressOf } from '../../../lib/runtime/shard-record.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { lambdaRecords } from '../../../lib/offline/msk-event.js';
import { generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();

/**
 * A warm batch's requests wait on one another no more than they must: the claim goes out
 * beside the coordinator record's read and the read of the batch's keys (the container
 * committed the shard last), the pack writes go out in one wave (at most one per changed key),
 * and the commit, which holds the small delta inline, waits for them. Returns how many packs
 * the batch wrote.
 */
function expectWaves(spans: readonly RequestSpan[], keysWritten: number): number {
  const byStart = [...spans].sort((a, b) => a.start - b.start);
  const opening = byStart.slice(0, 3);
  expect(opening.map((span) => span.operation).sort()).toEqual(['DynamoDB.BatchGetItem', 'DynamoDB.GetItem', 'DynamoDB.PutItem']);
  const openingDone = Math.max(...opening.map((span) => span.end));
  for (const span of opening) expect(span.start).toBeLessThan(Math.min(...opening.map((s) => s.end)));
  const keysRead = opening.find((span) => span.operation === 'DynamoDB.BatchGetItem');
  expect(byStart.filter((span) => span.operation === 'DynamoDB.BatchGetItem')).toEqual([keysRead]);
  const puts = byStart.filter((span) => span.operation === 'DynamoDB.PutItem');
  const commit = puts.at(-1);
  const keyWrites = puts.filter((span) => span.start >= openingDone && span !== commit);
  expect(keyWrites.length).toBeGreaterThanOrEqual(1);
  expect(keyWrites.length).toBeLessThanOrEqual(keysWritten);
  const firstKeyWritten = Math.min(...keyWrites.map((span) => span.end));
  for (const write of keyWrites) expect(write.start).toBeLessThan(firstKeyWritten);
  expect(commit?.start).toBeGreaterThanOrEqual(Math.max(...keyWrites.map((span) => span.end)));
  return keyWrites.length;
}

describe('AWS requests', () => {
  it('per batch follow the keys, not the records; per checkpoint, the shards, not the state', async () => {
    const name = uniqueName('costs');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([
      { topic: input, partitions: 2 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    // Ten categories, five on each partition; 2,000 orders on partition 0 and 3,000 on partition 1.
    const orders = generateOrders({ count: 8_000, seed: 9, categories: 10, lateFraction: 0 });
    const onPartition = (p: number) => orders.filter((o) => Number(o.category.split('-')[1]) % 2 === p);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    for (const [partition, count] of [
      [0, 2_000],
      [1, 3_000],
    ] as const) {
      await writer.write(
        onPartition(partition)
          .slice(0, count)
          .map(({ late: _late, ...o }) => ({ topic: input, partition, key: o.category, value: JSON.stringify(o) })),
      );
    }
    await writer.flush();
    await writer.close();

    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    let now = 1_000_000;
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }),
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => now },
    );
    const processor = processorHandler(runtime, 'stage-1');
    const coordinator = coordinatorHandler(runtime, () => Promise.reject(new Error('no shard should need a tick')), async () => {
      await commitHandler(runtime)();
    }, () => now);
    const reader = new CommittedRangeReader({ brokers: testBrokers() });
    const batch = async (partition: number, from: number, to: number) => {
      const records = await reader.read({ topic: input, partition, from, to });
      const { batches } = await processor({ eventSource: 'SelfManagedKafka', bootstrapServers: '', records: lambdaRecords(records) });
      return batches[0];
    };

    expect((await coordinator()).outcome).toBe('triggered');
    const small = await batch(0, 0, 1_000);
    const large = await batch(1, 0, 3_000);
    // The container committed partition 0's shard last: its claim is one conditional write, no
    // read. The coordinator record, and the ownership check if it writes a transaction.
    const spans: RequestSpan[] = [];
    const stopObserving = runtime.requests.observe((span) => spans.push(span));
    const warm = await batch(0, 1_000, 2_000);
    stopObserving();
    expect(warm?.keysRead).toBe(5);
    const packsWritten = expectWaves(spans, warm?.keysWritten ?? 0);
    expect(warm?.requests).toEqual({
      'DynamoDB.GetItem': 1 + (warm?.transaction ? 1 : 0),
      'DynamoDB.BatchGetItem': 1,
      'DynamoDB.PutItem': 2 + packsWritten,
    });
    // Five keys' windows and timers: the deltas are small, and the shard record holds them.
    const held = runtimeProgressOf((await runtime.store.peek({ stage: `stage-1/${input}`, shard: 0 }))?.progress);
    expect(held.deltas.map((delta) => ('inline' in delta ? delta.inline.changes.length : delta.object))).toEqual([5, 5]);
    for (const report of [small, large]) {
      expect(report?.keysRead).toBe(5);
      // The coordinator record, the claim's read and write, the ownership check before the
      // transaction, one BatchGetItem for the keys, a write per pack of changed keys, the
      // commit, which holds the changed keys inline. Not the coordinator record again after the
      // commit: no checkpoint has found the pipeline unchanged, so the coordinator cannot be
      // going to rest.
      const { 'DynamoDB.PutItem': puts = 0, ...others } = report?.requests ?? {};
      expect(others).toEqual({ 'DynamoDB.GetItem': 3, 'DynamoDB.BatchGetItem': 1 });
      expect(puts).toBeGreaterThanOrEqual(3);
      expect(puts).toBeLessThanOrEqual(2 + (report?.keysWritten ?? 0));
    }
    now += 1_000;
    const first = await coordinator();
    expect(first.outcome).toBe('completed');
    // The coordinator record read (and read again to confirm it before the manifest) and
    // written, each shard record read, for each shard one object with the deltas its record
    // held inline, the manifest written.
    expect(first.requests).toEqual({ 'DynamoDB.GetItem': 4, 'DynamoDB.PutItem': 1, 'S3.PutObject': 3 });

    now += 60_000;
    expect((await coordinator()).outcome).toBe('triggered');
    for (const partition of [0, 1]) await processor({ sluice: 'tick', stageId: 'stage-1', topic: input, partition });
    now += 1_000;
    const second = await coordinator();
    expect(second.outcome).toBe('completed');
    // From the second checkpoint on, the previous manifest is read to chain the state objects.
    // The ticks changed no state: only partition 0 holds a delta (the warm batch's, after it had
    // acknowledged the first checkpoint), written as one object beside the manifest.
    expect(second.requests).toEqual({ 'DynamoDB.GetItem': 4, 'DynamoDB.PutItem': 1, 'S3.GetObject': 1, 'S3.PutObject': 2 });
    await reader.close();
    await runtime.close();
  }, 120_000);
});
