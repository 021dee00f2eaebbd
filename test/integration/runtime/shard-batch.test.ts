// The processor's state path (prepareShardBatch + a shard store) under crashes, zombies,
// redelivery and gaps: the output of the committed batches must be exactly the expected
// 5-minute totals. Kafka output is simulated here by keeping the outputs of committed
// batches; the real-broker runtime test covers the transactions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_SIZE, type OrderAggregate } from '../../../examples/order-aggregation.js';
import inPlace from '../../../examples/order-aggregation-in-place.js';
import {
  BadRecordPolicy,
  DeliveryGuarantee,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkEmission,
  WatermarkStrategy,
} from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import type { KafkaRecord } from '../../../lib/kafka/records.js';
import { startDynamoDbEmulator, type Emulator } from '../../../lib/offline/emulators.js';
import type { Stage } from '../../../lib/plan/plan.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { prepareStatePathBatch as prepareShardBatch } from '../../../lib/testing/state-path.js';
import { hasStopped } from '../../../lib/runtime/shard-record.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import type { ShardStore } from '../../../lib/state/shard-store.js';
import { closingOrders, expectedTotals, generateOrders, seededRandom, type GeneratedOrder } from '../../helpers/orders.js';
import { noise } from '../../helpers/noise.js';

const PARTITIONS = 3;
const plan = planPipeline(inPlace);
const stage = ((): Stage => {
  const [first] = plan.stages;
  if (!first) throw new Error('the in-place seed pipeline has no stage');
  return first;
})();

function partitionOf(category: string): number {
  return Number(category.split('-')[1]) % PARTITIONS;
}

/** The orders topic as Kafka would hold it: per partition, offsets from 0. */
function topic(orders: readonly GeneratedOrder[]): KafkaRecord[][] {
  const partitions: KafkaRecord[][] = Array.from({ length: PARTITIONS }, () => []);
  for (const { late: _late, ...order } of orders) {
    const partition = partitionOf(order.category);
    const log = partitions[partition] ?? [];
    log.push({
      topic: 'orders',
      partition,
      offset: log.length,
      timestamp: order.timestamp,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(order.category),
      value: Buffer.from(JSON.stringify(order)),
      headers: [],
    });
  }
  return partitions;
}

interface Run {
  readonly committedOutputs: OrderAggregate[];
  readonly faults: Record<string, number>;
}

/**
 * Delivers every partition's log in batches, with faults chosen by `seed`: crash after the
 * state write (retry), zombie (a second invocation overtakes and commits first), redelivery of
 * a committed batch, overlapping batches, and gaps filled from the log.
 */
async function run(store: ShardStore, logs: KafkaRecord[][], seedValue: number): Promise<Run> {
  const random = seededRandom(seedValue);
  const committedOutputs: OrderAggregate[] = [];
  const faults: Record<string, number> = { crash: 0, zombie: 0, redelivery: 0, overlap: 0, gap: 0 };
  const clock = () => 0;
  const count = (fault: string) => (faults[fault] = (faults[fault] ?? 0) + 1);
  const keep = (outputs: Awaited<ReturnType<typeof prepareShardBatch>>['outputs']) => {
    for (const record of outputs.sinks.get('Order Aggregates Sink') ?? []) {
      committedOutputs.push(JSON.parse(record.value?.toString() ?? '') as OrderAggregate);
    }
  };
  for (const [partition, log] of logs.entries()) {
    const shard = { stage: 'stage-1', shard: partition };
    const prepare = (records: KafkaRecord[]) => prepareShardBatch({ plan, stage, store, shard, records, clock, log, startingOffset: 0 });
    const attempt = async (records: KafkaRecord[]) => {
      const batch = await prepare(records);
      await store.commit(batch.claim, batch.progress);
      keep(batch.outputs);
      return batch;
    };
    let position = 0;
    while (position < log.length) {
      const size = 50 + Math.floor(random() * 400);
      let records = log.slice(position, position + size);
      const roll = random();
      if (roll < 0.1) {
        count('crash');
        await prepare(records);
      } else if (roll < 0.2) {
        count('zombie');
        const zombie = await prepare(records);
        await attempt(records);
        await expect(store.commit(zombie.claim, zombie.progress)).rejects.toThrow(/fenced/);
        position += records.length;
        continue;
      } else if (roll < 0.3 && position > 0) {
        count('overlap');
        records = log.slice(Math.max(0, position - 100), position + size);
      } else if (roll < 0.4 && records.length > 20) {
        count('gap');
        records = records.slice(10);
      }
      const batch = await attempt(records);
      position = batch.progress.offset ?? position;
      if (random() < 0.1) {
        count('redelivery');
        const again = await attempt(records);
        expect(again.skipped).toBe(records.length);
        expect(again.outputs.sinks.size).toBe(0);
      }
    }
  }
  return { committedOutputs, faults };
}

function totalsOf(outputs: readonly OrderAggregate[]): Map<string, number> {
  const totals = new Map<string, number>();
  for (const a of outputs) {
    const key = `${a.category}@${a.windowStart}`;
    expect(totals.has(key), `window ${key} was written twice`).toBe(false);
    totals.set(key, a.amount);
  }
  return totals;
}

let dynamo: Emulator;
beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
});
afterAll(async () => {
  await dynamo.close();
});

describe('the processor’s state path', () => {
  const orders = generateOrders({ count: 12_000, seed: 7, categories: 6 });
  const closing = closingOrders(orders, PARTITIONS);
  const logs = topic([...orders, ...closing]);
  const expected = expectedTotals(orders, WINDOW_SIZE);

  it.each(Array.from({ length: 100 }, (_, i) => i + 1))('gives exactly the expected totals under faults (memory store, seed %i)', async (seedValue) => {
    const { committedOutputs, faults } = await run(new MemoryShardStore(), logs, seedValue);
    expect(totalsOf(committedOutputs)).toEqual(expected);
    expect(Object.values(faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(5);
  });

  it('gives exactly the expected totals under faults on DynamoDB, reading and writing each key once per batch', async () => {
    const client = createDocumentClient(dynamo.clientOptions);
    await ensureStateTable(client, 'shard-batch-state');
    const store = new DynamoShardStore(client, 'shard-batch-state');
    const { committedOutputs } = await run(store, logs, 42);
    expect(totalsOf(committedOutputs)).toEqual(expected);
    // 6 categories: every batch reads at most 6 keys (plus their timers' keys, the same).
    expect(store.requests.itemsRead / store.requests.itemReadRequests).toBeLessThanOrEqual(6);
  });

  it('costs DynamoDB requests per key per batch, not per record', async () => {
    const client = createDocumentClient(dynamo.clientOptions);
    await ensureStateTable(client, 'shard-batch-costs');
    const store = new DynamoShardStore(client, 'shard-batch-costs');
    const shard = { stage: 'stage-1', shard: 0 };
    const log = logs[0] ?? [];
    const clock = () => 0;
    for (const [from, to] of [
      [0, 1_000],
      [1_000, 2_000],
    ]) {
      const records = log.slice(from, to);
      const keys = new Set(records.map((r) => r.key?.toString())).size;
      const before = { ...store.requests };
      const batch = await prepareShardBatch({ plan, stage, store, shard, records, clock });
      await store.commit(batch.claim, batch.progress);
      const used = Object.fromEntries(
        Object.entries(store.requests).map(([name, count]) => [name, count - before[name as keyof typeof before]]),
      );
      // 1,000 records of 2 keys: one claim (a read and a write; only the write once the store
      // committed the shard last), one BatchGetItem, a write per pack of the keys (one or two),
      // one commit, a write unit each — the same for 10 records or 10,000.
      expect(records).toHaveLength(1_000);
      expect(keys).toBe(2);
      const claimReads = from === 0 ? 1 : 0;
      const { itemsRead, itemWrites, writeUnits, ...fixed } = used;
      expect(fixed).toEqual({ recordReads: claimReads, recordWrites: 2, itemReadRequests: 1 });
      expect(itemsRead).toBeLessThanOrEqual(keys);
      expect(itemWrites).toBeGreaterThanOrEqual(1);
      expect(itemWrites).toBeLessThanOrEqual(keys);
      expect(writeUnits).toBe(2 + (itemWrites ?? 0));
      expect(batch.keysWritten).toBeLessThanOrEqual(keys);
    }
  });

  it('fills a gap between its position and the delivered records from the log', async () => {
    const store = new MemoryShardStore();
    const shard = { stage: 'stage-1', shard: 0 };
    const log = logs[0] ?? [];
    const first = await prepareShardBatch({ plan, stage, store, shard, records: log.slice(0, 10), clock: () => 0, log });
    await store.commit(first.claim, first.progress);
    const second = await prepareShardBatch({ plan, stage, store, shard, records: log.slice(15, 20), clock: () => 0, log });
    expect(second.from).toBe(10);
    expect(second.filled).toBe(5);
    expect(second.progress.offset).toBe(20);
  });

  it('loads the state of a key that the record key spells as JSON (a number), across batches', async () => {
    const env = StreamExecutionEnvironment.create({ name: 'per-customer' });
    env
      .fromSource(
        KafkaSource.builder<{ customer: number; amount: number }>()
          .setBootstrapServers(['127.0.0.1:9092'])
          .setTopics('purchases')
          .setGroupId('per-customer')
          .setValueOnlyDeserializer(new JsonDeserializationSchema<{ customer: number; amount: number }>())
          .setPartitionedByRecordKey()
          .build(),
        WatermarkStrategy.noWatermarks(),
        'purchases',
      )
      .keyBy((purchase) => purchase.customer)
      .sum('amount')
      .sinkTo(
        KafkaSink.builder<{ customer: number; amount: number }>()
          .setBootstrapServers(['127.0.0.1:9092'])
          .setRecordSerializer(
            KafkaRecordSerializationSchema.builder<{ customer: number; amount: number }>()
              .setTopic('totals')
              .setValueSerializationSchema({ serialize: (total) => JSON.stringify(total) })
              .build(),
          )
          .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
          .build(),
      );
    const customerPlan = planPipeline(env);
    const [customerStage] = customerPlan.stages;
    if (!customerStage) throw new Error('no stage');
    const store = new MemoryShardStore();
    const shard = { stage: customerStage.id, shard: 0 };
    const purchase = (offset: number, customer: number, amount: number): KafkaRecord => ({
      topic: 'purchases',
      partition: 0,
      offset,
      timestamp: 0,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(JSON.stringify(customer)),
      value: Buffer.from(JSON.stringify({ customer, amount })),
      headers: [],
    });
    const totals: unknown[] = [];
    for (const records of [[purchase(0, 7, 5), purchase(1, 8, 1)], [purchase(2, 7, 3)]]) {
      const batch = await prepareShardBatch({ plan: customerPlan, stage: customerStage, store, shard, records, clock: () => 0 });
      await store.commit(batch.claim, batch.progress);
      for (const record of batch.outputs.sinks.values().next().value ?? []) totals.push(JSON.parse(record.value?.toString() ?? ''));
    }
    expect(totals).toEqual([
      { customer: 7, amount: 5 },
      { customer: 8, amount: 1 },
      { customer: 7, amount: 8 },
    ]);
  });

  describe('a key whose state would outgrow its item', () => {
    interface Note {
      customer: number;
      text: string;
    }
    function notesPlan(policy: BadRecordPolicy) {
      const env = StreamExecutionEnvironment.create({ name: 'notes' }).setBadRecordPolicy(policy);
      env
        .fromSource(
          KafkaSource.builder<Note>()
            .setBootstrapServers(['127.0.0.1:9092'])
            .setTopics('notes')
            .setGroupId('notes')
            .setValueOnlyDeserializer(new JsonDeserializationSchema<Note>())
            .setPartitionedByRecordKey()
            .build(),
          WatermarkStrategy.noWatermarks(),
          'notes',
        )
        .keyBy((note) => note.customer)
        .reduce((kept, note) => ({ customer: note.customer, text: kept.text + note.text }))
        .sinkTo(
          KafkaSink.builder<Note>()
            .setBootstrapServers(['127.0.0.1:9092'])
            .setRecordSerializer(
              KafkaRecordSerializationSchema.builder<Note>()
                .setTopic('all-notes')
                .setValueSerializationSchema({ serialize: (note) => `${note.customer}:${note.text.length}` })
                .build(),
            )
            .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
            .build(),
        );
      const notes = planPipeline(env);
      const [notesStage] = notes.stages;
      if (!notesStage) throw new Error('no stage');
      return { notes, notesStage };
    }
    const note = (offset: number, customer: number, length: number): KafkaRecord => ({
      topic: 'notes',
      partition: 0,
      offset,
      timestamp: 0,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(JSON.stringify(customer)),
      value: Buffer.from(JSON.stringify({ customer, text: noise(`${customer}@${offset}`, length) })),
      headers: [],
    });
    // Customer 7's second note would take its state past 8 MiB deflated (the notes' text barely deflates); the small
    // note after it comes later in the same key's order.
    const batch = [note(0, 7, 6_000_000), note(1, 8, 10), note(2, 7, 6_000_000), note(3, 7, 1)];

    it('dead-letters the records that would outgrow it, and the key goes on', async () => {
      const { notes, notesStage } = notesPlan(BadRecordPolicy.deadLetter('notes-dlq'));
      const store = new MemoryShardStore();
      const shard = { stage: notesStage.id, shard: 0 };
      const first = await prepareShardBatch({ plan: notes, stage: notesStage, store, shard, records: batch, clock: () => 0 });
      await store.commit(first.claim, first.progress);
      expect((first.outputs.sinks.values().next().value ?? []).map((r) => r.value?.toString())).toEqual(['7:6000000', '8:10']);
      expect(first.outputs.deadLetters.map((r) => r.headers?.find((h) => h.key === 'sluice.source.offset')?.value)).toEqual(['2', '3']);
      expect(first.outputs.deadLetters[0]?.headers?.find((h) => h.key === 'sluice.error')?.value).toMatch(
        /^the state of its key would take \d+ bytes deflated, more than the 8388608 a key may hold/,
      );
      const next = await prepareShardBatch({ plan: notes, stage: notesStage, store, shard, records: [note(4, 7, 5)], clock: () => 0 });
      expect((next.outputs.sinks.values().next().value ?? []).map((r) => r.value?.toString())).toEqual(['7:6000005']);
    });

    it('fails the batch under fail(), naming the record that would outgrow it', async () => {
      const { notes, notesStage } = notesPlan(BadRecordPolicy.fail());
      const failed = await prepareShardBatch({ plan: notes, stage: notesStage, store: new MemoryShardStore(), shard: { stage: notesStage.id, shard: 0 }, records: batch, clock: () => 0 });
      expect(failed.error?.message).toMatch(/^Record notes\/0@2: notes failed: the state of its key would take \d+ bytes deflated, more than the 8388608 a key may hold/);
      expect(failed.changes).toEqual([]);
    });

    it('counts the attempts at a failing record until fail()\'s bound, then only acknowledges until the failure is forgotten', async () => {
      const { notes, notesStage } = notesPlan(BadRecordPolicy.fail({ maxAttempts: 2 }));
      const store = new MemoryShardStore();
      const shard = { stage: notesStage.id, shard: 0 };
      let now = 1_000;
      const attempt = async (records: readonly KafkaRecord[]) => {
        const prepared = await prepareShardBatch({ plan: notes, stage: notesStage, store, shard, records, clock: () => now, startingOffset: 0 });
        await store.commit(prepared.claim, prepared.progress);
        now += 1_000;
        return prepared;
      };
      const first = await attempt(batch);
      expect(first.failure).toMatchObject({ offset: 2, attempts: 1, firstFailedAt: 1_000, lastFailedAt: 1_000 });
      expect(first.progress).toMatchObject({ offset: 0, catchUp: true });
      expect(hasStopped(notes, first.failure)).toBe(false);
      const second = await attempt(batch);
      expect(second.failure).toMatchObject({ offset: 2, attempts: 2, firstFailedAt: 1_000, lastFailedAt: 2_000 });
      expect(hasStopped(notes, second.failure)).toBe(true);
      // Stopped: a tick, or later records, are not processed, and the failure stays as it was.
      const stopped = await attempt([note(4, 9, 1)]);
      expect(stopped).toMatchObject({ skipped: 1, changes: [], progress: { offset: 0, failure: second.failure } });
      expect(stopped.error).toBeUndefined();
      expect([...stopped.outputs.sinks.values()].flat()).toEqual([]);
      // With more attempts allowed (a redeployed policy), it tries again, and a batch past the record forgets the failure.
      const { notes: skipping } = notesPlan(BadRecordPolicy.skip());
      const past = await prepareShardBatch({ plan: skipping, stage: notesStage, store, shard, records: batch, clock: () => now });
      expect(past.progress.failure).toBeUndefined();
      expect(past.progress.offset).toBe(4);
    });
  });
});

describe('a watermark emitted within a batch (env.setWatermarkEmission(WatermarkEmission.everyRecords(1)))', () => {
  type Click = { user: string; at: number } | { watermark: number; at: number };
  const env = StreamExecutionEnvironment.create({ name: 'clicks' }).setWatermarkEmission(WatermarkEmission.everyRecords(1));
  env
    .fromSource(
      KafkaSource.builder<Click>()
        .setBootstrapServers(['127.0.0.1:9092'])
        .setTopics('clicks')
        .setGroupId('clicks')
        .setValueOnlyDeserializer(new JsonDeserializationSchema<Click>())
        .setPartitionedByRecordKey()
        .build(),
      WatermarkStrategy.forGenerator<Click>(() => ({
        onEvent: (click, _timestamp, output) => {
          if ('watermark' in click) output.emitWatermark(click.watermark);
        },
        onPeriodicEmit: () => undefined,
      })).withTimestampAssigner((click) => click.at),
      'clicks',
    )
    .flatMap((click) => ('user' in click ? [{ user: click.user, n: 1 }] : []))
    .keyBy((click) => click.user)
    .window(TumblingEventTimeWindows.of(10_000))
    .sum('n')
    .sinkTo(
      KafkaSink.builder<{ user: string; n: number }>()
        .setBootstrapServers(['127.0.0.1:9092'])
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<{ user: string; n: number }>()
            .setTopic('counts')
            .setValueSerializationSchema({ serialize: (count) => `${count.user}:${count.n}` })
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .build(),
    );
  const clicks = planPipeline(env);
  const clickStage = clicks.stages[0] as Stage;
  const record = (offset: number, click: Click): KafkaRecord => ({
    topic: 'clicks',
    partition: 0,
    offset,
    timestamp: click.at,
    timestampType: 'CREATE_TIME',
    key: 'user' in click ? Buffer.from(click.user) : null,
    value: Buffer.from(JSON.stringify(click)),
    headers: [],
  });

  it('fires the windows it closes there, with the state of keys the batch does not hold, and judges the records after it late', async () => {
    const store = new MemoryShardStore();
    const shard = { stage: clickStage.id, shard: 0 };
    const first = await prepareShardBatch({ plan: clicks, stage: clickStage, store, shard, records: [record(0, { user: 'bob', at: 1_000 })], clock: () => 0 });
    await store.commit(first.claim, first.progress);
    const records = [record(1, { watermark: 9_999, at: 9_999 }), record(2, { user: 'ann', at: 2_000 }), record(3, { user: 'ann', at: 12_000 })];
    const second = await prepareShardBatch({ plan: clicks, stage: clickStage, store, shard, records, clock: () => 0 });
    // Bob's window closed at the marker; its state came from the store, not from this batch.
    expect([...second.outputs.sinks.values()].flat().map((r) => r.value?.toString())).toEqual(['bob:1']);
    expect(second.progress.dropped?.late ?? 0, "ann's click at 2 s came after the watermark of 9,999").toBe(1);
    // Cut in two, the batch's emission point stays after offset 1: the same outcome.
    const again = new MemoryShardStore();
    const one = await prepareShardBatch({ plan: clicks, stage: clickStage, store: again, shard, records: [record(0, { user: 'bob', at: 1_000 })], clock: () => 0 });
    await again.commit(one.claim, one.progress);
    const two = await prepareShardBatch({ plan: clicks, stage: clickStage, store: again, shard, records: records.slice(0, 2), clock: () => 0 });
    expect([...two.outputs.sinks.values()].flat().map((r) => r.value?.toString())).toEqual(['bob:1']);
    expect(two.progress.dropped?.late ?? 0).toBe(1);
  });
});

describe('assignTimestampsAndWatermarks after the source', () => {
  interface Reading { sensor: string; at: number; celsius: number }
  const env = StreamExecutionEnvironment.create({ name: 'readings' });
  env
    .fromSource(
      KafkaSource.builder<string>()
        .setBootstrapServers(['127.0.0.1:9092'])
        .setTopics('readings')
        .setGroupId('readings')
        .setValueOnlyDeserializer(new SimpleStringSchema())
        .setPartitionedByRecordKey()
        .build(),
      WatermarkStrategy.noWatermarks(),
      'readings',
    )
    .map((line): Reading => {
      const [sensor = '', at, celsius] = line.split(',');
      return { sensor, at: Number(at), celsius: Number(celsius) };
    })
    .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<Reading>(100).withTimestampAssigner((reading) => reading.at))
    .keyBy((reading) => reading.sensor)
    .window(TumblingEventTimeWindows.of(1_000))
    .max('celsius')
    .sinkTo(
      KafkaSink.builder<Reading>()
        .setBootstrapServers(['127.0.0.1:9092'])
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<Reading>()
            .setTopic('peaks')
            .setValueSerializationSchema({ serialize: (reading) => `${reading.sensor} ${reading.celsius}` })
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .build(),
    );
  const readings = planPipeline(env);
  const readingStage = readings.stages[0] as Stage;
  const reading = (offset: number, line: string): KafkaRecord => ({
    topic: 'readings',
    partition: 0,
    offset,
    // The record's own time says nothing: the event time is in the line.
    timestamp: 0,
    timestampType: 'CREATE_TIME',
    key: Buffer.from(line.split(',')[0] ?? ''),
    value: Buffer.from(line),
    headers: [],
  });

  it('windows by the event time it assigns, with its generator carried from one invocation to the next', async () => {
    const store = new MemoryShardStore();
    const shard = { stage: readingStage.id, shard: 0 };
    const first = await prepareShardBatch({ plan: readings, stage: readingStage, store, shard, records: [reading(0, 's1,200,20'), reading(1, 's1,900,24')], clock: () => 0 });
    await store.commit(first.claim, first.progress);
    expect([...first.outputs.sinks.values()].flat()).toEqual([]);
    // At 1,150 the watermark passes 999 (1,150 - 100 - 1): the first second closes, with its
    // highest reading; the reading at 950 after that comes too late for it.
    const second = await prepareShardBatch({ plan: readings, stage: readingStage, store, shard, records: [reading(2, 's1,1150,21')], clock: () => 0 });
    await store.commit(second.claim, second.progress);
    expect([...second.outputs.sinks.values()].flat().map((r) => [r.value?.toString(), r.timestamp])).toEqual([['s1 24', 999]]);
    const third = await prepareShardBatch({ plan: readings, stage: readingStage, store, shard, records: [reading(3, 's1,950,99')], clock: () => 0 });
    expect([...third.outputs.sinks.values()].flat()).toEqual([]);
    expect(third.progress.dropped?.late).toBe(1);
  });
});
