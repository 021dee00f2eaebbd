// The runtime end to end against the real broker and DynamoDB (dynalite): processor,
// coordinator and commit function drive a one-stage and a two-stage pipeline through crashes
// at every step, redeliveries and gaps; the read_committed output must equal what a plain
// loop computes. Seeded: a failure names the seed that reproduces it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minutes, seconds, TumblingEventTimeWindows } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin, KafkaCommitter, type KafkaRecord } from '../../../lib/kafka/index.js';
import { startDynamoDbEmulator, type Emulator } from '../../../lib/offline/emulators.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { commitCompletedCheckpoints, listShards, runCoordinator, type ShardTarget } from '../../../lib/runtime/coordinator.js';
import { Processor, type ProcessorStep } from '../../../lib/runtime/processor.js';
import { DynamoCoordinatorStore } from '../../../lib/state/coordinator-store.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { closingOrders, expectedTotals, generateOrders, seededRandom, type GeneratedOrder } from '../../helpers/orders.js';

const PARTITIONS = 3;

class Crash extends Error {}

let dynamo: Emulator;
let admin: KafkaAdmin;
beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
  admin = new KafkaAdmin({ brokers: testBrokers() });
});
afterAll(async () => {
  await admin.close();
  await dynamo.close();
});

interface Schedule {
  readonly seed: number;
  readonly window: number;
  readonly rest: Parameters<typeof orderTotalsPipeline>[0]['rest'];
}

/**
 * Produces generated orders, then plays Lambda: polls every shard's input with read_committed,
 * invokes the processor (retrying a crashed invocation with the same records, sometimes
 * redelivering or cutting a batch), and runs coordinator and commit function now and then,
 * until everything is drained. Returns the committed output and the orders.
 */
async function play({ seed, window, rest }: Schedule) {
  const random = seededRandom(seed);
  const name = uniqueName('eo');
  const input = `${name}-orders`;
  await admin.ensureTopics([
    { topic: input, partitions: PARTITIONS },
    { topic: `${name}-out`, partitions: 2 },
    { topic: `${name}-keyBy-2-repartition`, partitions: 2 },
  ]);
  const orders = generateOrders({ count: 3_000, seed, categories: 6 });
  const producer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await producer.write(
    [...orders, ...closingOrders(orders, PARTITIONS)].map(({ late: _late, ...order }) => ({
      topic: input,
      partition: Number(order.category.split('-')[1]) % PARTITIONS,
      key: order.category,
      value: JSON.stringify(order),
    })),
  );
  await producer.flush();
  await producer.close();

  const plan = planPipeline(orderTotalsPipeline({ name, input, window, rest, brokers: testBrokers() }));
  const client = createDocumentClient(dynamo.clientOptions);
  await ensureStateTable(client, name);
  const store = new DynamoShardStore(client, name);
  const coordinator = new DynamoCoordinatorStore(client, name);
  let now = 1_000_000;
  const clock = () => now;
  const crashes: Partial<Record<ProcessorStep, number>> = {};
  const onStep = (step: ProcessorStep) => {
    if (random() < 0.08) {
      crashes[step] = (crashes[step] ?? 0) + 1;
      throw new Crash(step);
    }
  };
  const processor = new Processor({ plan, store, coordinator, kafka: { brokers: testBrokers() }, clock, onStep });
  const committer = new KafkaCommitter({ brokers: testBrokers() });
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  const shards = await listShards(plan, admin);

  const invoke = async (target: ShardTarget, records: KafkaRecord[]) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await processor.processShard(target.stageId, target.topic, target.partition, records);
      } catch (error) {
        if (!(error instanceof Crash) || attempt > 50) throw error;
      }
    }
  };
  const coordinate = async () => {
    now += seconds(10);
    await runCoordinator({
      plan,
      store,
      coordinator,
      shards,
      clock,
      tick: async (target) => {
        await invoke(target, []);
      },
    });
    await commitCompletedCheckpoints({ plan, store, coordinator, committer, shards });
  };

  const positions = new Map(shards.map((target) => [target, 0]));
  const faults = { redelivered: 0, cut: 0 };
  for (let quietRounds = 0; quietRounds < 4; ) {
    let delivered = 0;
    for (const target of shards) {
      const position = positions.get(target) ?? 0;
      const poll = await reader.readAvailable(target.topic, target.partition, position, 20 + Math.floor(random() * 150));
      let records = poll.records;
      if (records.length === 0) continue;
      delivered += records.length;
      if (random() < 0.1 && records.length > 5) {
        faults.cut++;
        records = records.slice(3);
      }
      await invoke(target, records);
      if (random() < 0.1) {
        faults.redelivered++;
        await invoke(target, records);
      }
      positions.set(target, poll.next);
      now += 500;
    }
    if (delivered === 0 || random() < 0.3) await coordinate();
    quietRounds = delivered === 0 ? quietRounds + 1 : 0;
  }
  await processor.close();
  await committer.close();
  await reader.close();
  return { name, orders, crashes, faults, stages: plan.stages.length };
}

function uniqueTotals(messages: { value: string | null }[], seed: number): Map<string, number> {
  const totals = new Map<string, number>();
  for (const message of messages) {
    const total = JSON.parse(message.value ?? '') as Total;
    const key = `${total.category}@${total.windowStart}`;
    expect(totals.has(key), `seed ${seed}: ${key} was written twice`).toBe(false);
    totals.set(key, total.amount);
  }
  return totals;
}

/** Per window, the highest category total (as a plain loop computes it). */
function topPerWindow(orders: readonly GeneratedOrder[], window: number): Map<number, number> {
  const top = new Map<number, number>();
  for (const [key, amount] of expectedTotals(orders, window)) {
    const windowStart = Number(key.split('@')[1]);
    top.set(windowStart, Math.max(top.get(windowStart) ?? 0, amount));
  }
  return top;
}

describe('the serverless runtime, exactly once', () => {
  it.each([11, 12, 13])(
    'one stage: writes exactly the expected totals through crashes at every step, redeliveries and cut batches (seed %i)',
    async (seed) => {
      const window = minutes(5);
      const { name, orders, crashes, faults, stages } = await play({ seed, window, rest: (totals) => totals });
      expect(stages).toBe(1);
      const expected = expectedTotals(orders, window);
      const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
      expect(uniqueTotals(consumed, seed), `seed ${seed}`).toEqual(expected);
      expect(Object.values(crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
      expect(faults.redelivered + faults.cut).toBeGreaterThan(0);
    },
    240_000,
  );

  it.each([21, 22])(
    'two stages through a repartition topic: writes exactly each minute’s top category (seed %i)',
    async (seed) => {
      const window = minutes(1);
      const { name, orders, crashes, stages } = await play({
        seed,
        window,
        rest: (totals) =>
          totals
            .keyBy((total) => total.windowStart)
            .window(TumblingEventTimeWindows.of(window))
            .maxBy('amount'),
      });
      expect(stages).toBe(2);
      const expected = topPerWindow(orders, window);
      const consumed = await consumeAll(`${name}-out`, { expected: expected.size });
      const totals = uniqueTotals(consumed, seed);
      const top = new Map([...totals].map(([key, amount]) => [Number(key.split('@')[1]), amount]));
      expect(top.size, `seed ${seed}: one result per minute`).toBe(totals.size);
      expect(top, `seed ${seed}`).toEqual(expected);
      expect(Object.values(crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
    },
    240_000,
  );
});
