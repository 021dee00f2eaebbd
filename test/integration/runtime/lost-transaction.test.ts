// A pre-committed transaction that the broker aborts (its timeout passed before the
// checkpoint committed it) would be data loss. With a snapshot store the commit function
// rolls its shard back to just before it and the shard replays, so the read_committed output
// is still exact; without one, the commit function raises the loss, naming shard and
// checkpoint, and never reports success.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter, TransactionLostError } from '../../../lib/kafka/index.js';
import { CheckpointTransactionLostError } from '../../../lib/runtime/commit-function.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { isRolledBack } from '../../../lib/snapshot/checkpoint-state.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { lambdaRecords } from '../../../lib/offline/msk-event.js';
import { inProcessFunctions, useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';

const environment = useRuntimeEnvironment();

/** One partition of orders processed in one batch whose transaction the broker then aborts; checkpoint 1 completes. */
async function loseATransaction(withSnapshots: boolean) {
  const name = uniqueName('lost');
  const input = `${name}-orders`;
  await environment().admin.ensureTopics([
    { topic: input, partitions: 1 },
    { topic: `${name}-out`, partitions: 1 },
  ]);
  const orders = generateOrders({ count: 300, seed: 3, categories: 2, lateFraction: 0 });
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await writer.write(
    [...orders, ...closingOrders(orders, 1)].map(({ late: _late, ...o }) => ({ topic: input, partition: 0, key: o.category, value: JSON.stringify(o) })),
  );
  await writer.flush();
  await writer.close();

  await ensureStateTable(createDocumentClient(environment().dynamo), name);
  if (withSnapshots) await ensureBucket(createS3Client(environment().s3), name);
  let now = 1_000_000;
  const runtime = new PipelineRuntime(
    orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5), transactionTimeoutMs: 4_000 }),
    {
      tableName: name,
      kafka: { brokers: testBrokers() },
      dynamodb: environment().dynamo,
      ...(withSnapshots ? { snapshotBucket: name, s3: environment().s3 } : {}),
    },
    { clock: () => now },
  );
  const { processor, commit, coordinator } = inProcessFunctions(runtime, () => now, { startsCommit: false });

  await coordinator(); // triggers checkpoint 1
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  const records = await reader.read({ topic: input, partition: 0, from: 0, to: orders.length + 1 });
  await reader.close();
  const report = await processor({ eventSource: 'SelfManagedKafka', bootstrapServers: testBrokers().join(','), records: lambdaRecords(records) });
  const handle = report.batches[0]?.transaction;
  expect(handle).toBeDefined();

  // The broker aborts the transaction once its 4 s timeout passes.
  await expect
    .poll(async () => (await runtime.committer.describe(handle?.transactionalId ?? ''))?.state, { timeout: 20_000, interval: 250 })
    .toBe('CompleteAbort');
  now += 2_000;
  await coordinator(); // completes checkpoint 1
  const advance = () => {
    now += 2_000;
  };
  return { name, input, runtime, commit, coordinator, advance, expected: expectedTotals(orders, minutes(5)) };
}

describe('a transaction lost to its timeout', () => {
  it('is rolled back and replayed from the snapshot: the read_committed output is exact', async () => {
    const { name, input, runtime, commit, coordinator, advance, expected } = await loseATransaction(true);

    const report = await commit();
    expect(report.rollbacks).toHaveLength(1);
    expect(report.rollbacks[0]).toMatchObject({ stageId: 'stage-1', topic: input, partition: 0, checkpoint: 1, base: 0 });
    expect(report.transactions).toBe(0);

    // The next coordinator run ticks the shard, whose invocation rolls it back, then catches up
    // from offset 0 and writes the totals again.
    advance();
    await coordinator();
    // Checkpoint 1's manifest shows the shard past the lost output: restore will not start there.
    expect(runtime.snapshots && (await isRolledBack(runtime.snapshots, 1))).toBe(true);
    for (let round = 0; round < 3; round++) {
      advance();
      await coordinator();
      await commit();
    }
    const coordinatorRecord = await runtime.coordinator.get();
    expect(coordinatorRecord.committed).toBeGreaterThanOrEqual(2);

    const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
    const totals = new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
    expect(consumed).toHaveLength(expected.size);
    expect(totals).toEqual(expected);
    await runtime.close();
  }, 60_000);

  it('without a snapshot store, is reported by the commit function with its shard and checkpoint, never as success', async () => {
    const { name, input, runtime, commit } = await loseATransaction(false);
    const error = await commit().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointTransactionLostError);
    expect((error as CheckpointTransactionLostError).message).toMatch(
      new RegExp(`^Checkpoint 1, shard stage-1/${input}/0: Transaction "${name}-tx-stage-1-${input}-0-\\d+" .* is lost`),
    );
    expect((error as CheckpointTransactionLostError).cause).toBeInstanceOf(TransactionLostError);
    expect((await runtime.coordinator.get()).committed).toBe(0);
    await expect(commit()).rejects.toBeInstanceOf(CheckpointTransactionLostError);
    await runtime.close();
  }, 60_000);
});
