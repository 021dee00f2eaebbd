// The Lambda handlers end to end, fed Lambda-shaped Kafka events: the harness writes orders and
// reads the output over `brokers`; the runtime reaches the cluster over `runtimeKafka`, which
// may be another listener of the same broker (TLS, SASL).
import type { MSKEvent, SelfManagedKafkaEvent } from 'aws-lambda';
import { expect } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import { createDocumentClient, type AwsClientOptions } from '../../lib/aws/clients.js';
import { commitHandler, coordinatorHandler, processorHandler, type TickEvent } from '../../lib/aws/handlers.js';
import { PipelineRuntime } from '../../lib/aws/runtime.js';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin, type KafkaConnectionOptions } from '../../lib/kafka/index.js';
import { lambdaRecords } from '../../lib/offline/msk-event.js';
import { ensureStateTable } from '../../lib/state/dynamodb-shard-store.js';
import { consumeTopic, uniqueName } from './kafka-io.js';
import { closingOrders, expectedTotals, generateOrders } from './orders.js';
import { orderTotalsPipeline, type Total } from './pipelines.js';

export interface HandlerRunOptions {
  readonly brokers: readonly string[];
  readonly runtimeKafka: KafkaConnectionOptions;
  readonly dynamo: AwsClientOptions;
  /** Which event shape carries each half of the records. */
  readonly events: readonly ['aws:kafka' | 'SelfManagedKafka', 'aws:kafka' | 'SelfManagedKafka'];
}

/**
 * Processes 1,500 orders on partitions 0 and 1 of three (partition 2 stays idle, so only ticks
 * move it), checkpoints and commits, and expects exactly the totals a plain loop computes.
 */
export async function runHandlersOverEvents({ brokers, runtimeKafka, dynamo, events }: HandlerRunOptions): Promise<void> {
  const name = uniqueName('handlers');
  const input = `${name}-orders`;
  const admin = new KafkaAdmin({ brokers });
  await admin.ensureTopics([
    { topic: input, partitions: 3 },
    { topic: `${name}-out`, partitions: 1 },
  ]);
  const orders = generateOrders({ count: 1_500, seed: 5, categories: 4 });
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers });
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

  await ensureStateTable(createDocumentClient(dynamo), name);
  let now = 5_000_000;
  const runtime = new PipelineRuntime(
    orderTotalsPipeline({ name, input, brokers: runtimeKafka.brokers, window: minutes(5) }),
    { tableName: name, kafka: runtimeKafka, dynamodb: dynamo },
    { clock: () => now },
  );
  const processor = processorHandler(runtime, 'stage-1');
  const ticks: TickEvent[] = [];
  const commit = commitHandler(runtime);
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

  const reader = new CommittedRangeReader({ brokers });
  const [description] = await admin.describeTopics([input]);
  const records = (
    await Promise.all((description?.partitions ?? []).map((p) => reader.read({ topic: input, partition: p.partition, from: 0, to: Number(p.stable) })))
  ).flat();
  await reader.close();
  await admin.close();
  const half = Math.floor(records.length / 2);
  const bootstrapServers = runtimeKafka.brokers.join(',');
  const eventOf = (source: 'aws:kafka' | 'SelfManagedKafka', part: typeof records): MSKEvent | SelfManagedKafkaEvent =>
    source === 'aws:kafka'
      ? { eventSource: source, eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/test/abc', bootstrapServers, records: lambdaRecords(part) }
      : { eventSource: source, bootstrapServers, records: lambdaRecords(part) };
  const first = await processor(eventOf(events[0], records.slice(0, half)));
  expect(first.batches.map((b) => b.shard.shard).sort()).toEqual([...new Set(records.slice(0, half).map((r) => r.partition))].sort());
  await processor(eventOf(events[1], records.slice(half)));

  for (let round = 0; round < 5; round++) {
    now += 10_000;
    await coordinator();
  }
  expect(ticks.some((tick) => tick.partition === 2)).toBe(true);
  expect((await runtime.coordinator.get()).committed).toBeGreaterThanOrEqual(2);

  const expected = expectedTotals(orders, minutes(5));
  const consumed = await consumeTopic(`${name}-out`, { brokers, expected: expected.size });
  const totals = new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
  expect(consumed).toHaveLength(expected.size);
  expect(totals).toEqual(expected);
  expect(await commit()).toMatchObject({ transactions: 0 });
  await runtime.close();
}
