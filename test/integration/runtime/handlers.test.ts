// The Lambda handlers over the runtime, fed Lambda-shaped Kafka events, against the real
// broker and dynalite — including a partition that never receives a record.
import type { MSKEvent, SelfManagedKafkaEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import { commitHandler, coordinatorHandler, processorHandler, type TickEvent } from '../../../lib/aws/handlers.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { lambdaRecords } from '../../../lib/offline/msk-event.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';

const environment = useRuntimeEnvironment();

describe('the Lambda handlers', () => {
  it('process MSK and self-managed events, tick an idle partition, and commit exactly the expected totals', async () => {
    const name = uniqueName('handlers');
    const input = `${name}-orders`;
    // Three partitions; orders go to 0 and 1 only: partition 2 stays idle throughout.
    await environment().admin.ensureTopics([
      { topic: input, partitions: 3 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    const orders = generateOrders({ count: 1_500, seed: 5, categories: 4 });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      [...orders, ...closingOrders(orders, 2)].map(({ late: _late, ...order }) => ({
        topic: input,
        partition: Number(order.category.split('-')[1]) % 2,
        key: order.category,
        value: JSON.stringify(order),
      })),
    );
    await writer.flush();
    await writer.close();

    const client = createDocumentClient(environment().dynamo);
    await ensureStateTable(client, name);
    let now = 5_000_000;
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }),
      { tableName: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
      { clock: () => now },
    );
    const processor = processorHandler(runtime, 'stage-1');
    const ticks: TickEvent[] = [];
    const coordinator = coordinatorHandler(
      runtime,
      async (target) => {
        const tick: TickEvent = { sluice: 'tick', ...target };
        ticks.push(tick);
        await processor(tick);
      },
      async () => {
        await commit();
      },
      () => now,
    );
    const commit = commitHandler(runtime);

    const reader = new CommittedRangeReader({ brokers: testBrokers() });
    const [description] = await environment().admin.describeTopics([input]);
    const records = (
      await Promise.all(
        (description?.partitions ?? []).map((p) => reader.read({ topic: input, partition: p.partition, from: 0, to: Number(p.stable) })),
      )
    ).flat();
    await reader.close();
    const half = Math.floor(records.length / 2);
    const msk: MSKEvent = {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/test/abc',
      bootstrapServers: testBrokers().join(','),
      records: lambdaRecords(records.slice(0, half)),
    };
    const selfManaged: SelfManagedKafkaEvent = {
      eventSource: 'SelfManagedKafka',
      bootstrapServers: testBrokers().join(','),
      records: lambdaRecords(records.slice(half)),
    };
    const first = await processor(msk);
    expect(first.batches.map((b) => b.shard.shard).sort()).toEqual(
      [...new Set(records.slice(0, half).map((r) => r.partition))].sort(),
    );
    await processor(selfManaged);

    for (let round = 0; round < 5; round++) {
      now += 10_000;
      await coordinator();
    }
    expect(ticks.some((tick) => tick.partition === 2)).toBe(true);
    expect((await runtime.coordinator.get()).committed).toBeGreaterThanOrEqual(2);

    const expected = expectedTotals(orders, minutes(5));
    const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
    const totals = new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
    expect(consumed).toHaveLength(expected.size);
    expect(totals).toEqual(expected);
    expect(await commit()).toMatchObject({ transactions: 0 });
    await runtime.close();
  }, 120_000);

  it('start by checking that every topic the pipeline names exists, and name the missing one', async () => {
    const name = uniqueName('missing');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([{ topic: input, partitions: 1 }]);
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    const runtime = new PipelineRuntime(orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }), {
      tableName: name,
      kafka: { brokers: testBrokers() },
      dynamodb: environment().dynamo,
    });
    const coordinator = coordinatorHandler(runtime, () => Promise.resolve(), () => Promise.resolve());
    await expect(coordinator()).rejects.toThrow(
      `Topic ${name}-out does not exist on the brokers. Create it (kafka-topics.sh --create --topic <name> --partitions <n>), or fix the name in the pipeline.`,
    );
    expect((await runtime.coordinator.get()).triggered).toBe(0);
    await environment().admin.ensureTopics([{ topic: `${name}-out`, partitions: 1 }]);
    expect((await coordinator()).outcome).toBe('triggered');
    await runtime.close();
  });

  it('refuses a stage the pipeline does not have', () => {
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name: 'no-such-stage', input: 'in', brokers: testBrokers(), window: minutes(1) }),
      { tableName: 'unused', kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
    );
    expect(() => processorHandler(runtime, 'stage-7')).toThrow('Pipeline no-such-stage has no stage-7; its stages are stage-1');
  });
});
