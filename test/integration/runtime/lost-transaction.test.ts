// A pre-committed transaction that the broker aborts (its timeout passed before the
// checkpoint committed it) is data loss: the commit function must say so, naming the shard
// and the checkpoint, and never report success.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter, TransactionLostError } from '../../../lib/kafka/index.js';
import { CheckpointTransactionLostError } from '../../../lib/runtime/coordinator.js';
import { commitHandler, coordinatorHandler, processorHandler } from '../../../lib/runtime/handlers.js';
import { PipelineRuntime } from '../../../lib/runtime/runtime.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { lambdaRecords } from '../../helpers/lambda-events.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { closingOrders, generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';

const environment = useRuntimeEnvironment();

describe('a transaction lost to its timeout', () => {
  it('is reported by the commit function with its shard and checkpoint, never as success', async () => {
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

    const client = createDocumentClient(environment().dynamo);
    await ensureStateTable(client, name);
    let now = 1_000_000;
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5), transactionTimeoutMs: 4_000 }),
      { tableName: name, kafka: { brokers: testBrokers() }, aws: environment().dynamo },
      { clock: () => now },
    );
    const processor = processorHandler(runtime, 'stage-1');
    const commit = commitHandler(runtime);
    const coordinator = coordinatorHandler(
      runtime,
      async (target) => {
        await processor({ sluice: 'tick', ...target });
      },
      () => Promise.resolve(),
      () => now,
    );

    await coordinator(); // triggers checkpoint 1
    const reader = new CommittedRangeReader({ brokers: testBrokers() });
    const records = await reader.read({ topic: input, partition: 0, from: 0, to: orders.length + 1 });
    await reader.close();
    const report = await processor({
      eventSource: 'SelfManagedKafka',
      bootstrapServers: testBrokers().join(','),
      records: lambdaRecords(records),
    });
    const handle = report.batches[0]?.transaction;
    expect(handle).toBeDefined();

    // The broker aborts the transaction once its 4 s timeout passes.
    await expect
      .poll(async () => (await runtime.committer.describe(handle?.transactionalId ?? ''))?.state, { timeout: 20_000, interval: 250 })
      .toBe('CompleteAbort');
    now += 2_000;
    await coordinator(); // completes checkpoint 1

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
