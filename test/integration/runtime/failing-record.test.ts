// A record that fails under BadRecordPolicy.fail, on the real broker and dynalite: the shard
// retries it a bounded number of times, then stops there while checkpoints go on; status shows
// it, `resume` gives it its attempts again, and once the pipeline is fixed the output is exactly
// the expected totals.
import { describe, expect, it } from 'vitest';
import { BadRecordPolicy, minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import type { KafkaRecord } from '../../../lib/kafka/records.js';
import { mskEvent } from '../../../lib/offline/msk-event.js';
import { formatStatus, pipelineStatus } from '../../../lib/runtime/status.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { inProcessFunctions, useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const CLUSTER = 'arn:aws:kafka:eu-west-1:123456789012:cluster/test/abc';

describe('a record that fails under BadRecordPolicy.fail', () => {
  it('is tried maxAttempts times, then its shard stops there and acknowledges, until resume; fixed, the output is exact', async () => {
    const name = uniqueName('failing');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([
      { topic: input, partitions: 1 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    const orders = generateOrders({ count: 600, seed: 9, categories: 3 });
    const asRecord = ({ late: _late, ...order }: (typeof orders)[number]) => ({ topic: input, partition: 0, key: order.category, value: JSON.stringify(order) });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write([
      ...orders.slice(0, 300).map(asRecord),
      { topic: input, partition: 0, key: 'category-1', value: '{"orderId": "o-broken", ' },
      ...[...orders.slice(300), ...closingOrders(orders, 1)].map(asRecord),
    ]);
    await writer.flush();
    await writer.close();
    const reader = new CommittedRangeReader({ brokers: testBrokers() });
    const log = await reader.read({ topic: input, partition: 0, from: 0, to: 602 });
    await reader.close();
    const event = (records: readonly KafkaRecord[]) => mskEvent(records, CLUSTER, testBrokers());

    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    let now = Date.now();
    const runtimeWith = (badRecordPolicy: BadRecordPolicy) =>
      new PipelineRuntime(
        orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5), badRecordPolicy }),
        { tableName: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
        { clock: () => now },
      );
    const functionsOf = (runtime: PipelineRuntime) => inProcessFunctions(runtime, () => now);

    const failing = runtimeWith(BadRecordPolicy.fail({ maxAttempts: 3 }));
    const { processor, coordinator } = functionsOf(failing);
    const firstBatch = log.slice(0, 400);
    const failure = `Record ${input}/0@300: orders failed: the value (24 bytes) is not valid JSON.`;
    await expect(processor(event(firstBatch))).rejects.toThrow(failure);
    await expect(processor(event(firstBatch))).rejects.toThrow(
      /Attempt 2 of 3: after that the shard stops at this record, and `sluice resume` starts it again\.$/,
    );
    const third = await processor(event(firstBatch));
    expect(third.batches[0]?.stopped).toMatchObject({ offset: 300, attempts: 3 });
    expect(third.batches[0]?.stopped?.reason).toContain(failure);
    // Stopped, the shard takes what the trigger delivers next without processing it (the
    // trigger moves on), and keeps acknowledging, so that checkpoints complete.
    const later = await processor(event(log.slice(400)));
    expect(later.batches[0]).toMatchObject({ recordsOut: 0, keysWritten: 0, stopped: { offset: 300, attempts: 3 } });
    for (let round = 0; round < 4; round++) {
      now += 10_000;
      await coordinator();
    }
    expect((await failing.coordinator.get()).committed).toBeGreaterThanOrEqual(1);

    const status = await pipelineStatus(failing);
    expect(status.shards[0]).toMatchObject({ offset: 0, failure: { offset: 300, attempts: 3, stopped: true } });
    expect(formatStatus(status)).toContain(`stage-1 ${input}/0: STOPPED at offset 300 after 3 attempts since `);

    // resume gives the shard its attempts again: still unfixed, the record fails its first.
    expect(await failing.resume()).toMatchObject([{ stageId: 'stage-1', topic: input, partition: 0, failure: { offset: 300, attempts: 3 } }]);
    expect(await failing.resume()).toEqual([]);
    await expect(processor(event(log.slice(400)))).rejects.toThrow(/Attempt 1 of 3/);
    await failing.close();

    // The fix: a policy that skips it. The shard reads from where it stopped, the trigger having moved on.
    const fixed = runtimeWith(BadRecordPolicy.skip());
    const functions = functionsOf(fixed);
    const resumed = await functions.processor(event(log.slice(500)));
    expect(resumed.batches[0]).toMatchObject({ filled: 500, dropped: { skipped: 1 } });
    expect(resumed.batches[0]?.stopped).toBeUndefined();
    for (let round = 0; round < 4; round++) {
      now += 10_000;
      await functions.coordinator();
    }
    expect((await pipelineStatus(fixed)).shards[0]?.failure).toBeUndefined();
    const expected = expectedTotals(orders, minutes(5));
    const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
    expect(new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]))).toEqual(expected);
    expect(consumed).toHaveLength(expected.size);
    await fixed.close();
  }, 120_000);
});
