// The runtime end to end against the real broker and DynamoDB (dynalite): processor,
// coordinator and commit function drive a keyed-window pipeline with an EXACTLY_ONCE sink
// through crashes at every step, redeliveries and gaps; the read_committed output must equal
// the totals a plain loop computes. Seeded: a failure prints the seed that reproduces it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DeliveryGuarantee,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  minutes,
  OffsetResetStrategy,
  OffsetsInitializer,
  seconds,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
} from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin, KafkaCommitter, type KafkaRecord } from '../../../lib/kafka/index.js';
import { startDynamoDbEmulator, type Emulator } from '../../../lib/offline/emulators.js';
import { planPipeline } from '../../../lib/plan/planner.js';
import { commitCompletedCheckpoints, listShards, runCoordinator, type ShardTarget } from '../../../lib/runtime/coordinator.js';
import { Processor, type ProcessorStep } from '../../../lib/runtime/processor.js';
import { DynamoCoordinatorStore } from '../../../lib/state/coordinator-store.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders, seededRandom } from '../../helpers/orders.js';

interface Order {
  orderId: string;
  category: string;
  amount: number;
  timestamp: number;
}

const WINDOW = minutes(5);
const PARTITIONS = 3;

function pipeline(input: string, output: string, name: string) {
  const env = StreamExecutionEnvironment.create({ name });
  env.enableCheckpointing(seconds(10));
  env
    .fromSource(
      KafkaSource.builder<Order>()
        .setBootstrapServers(testBrokers())
        .setTopics(input)
        .setGroupId(name)
        .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
        .setValueOnlyDeserializer(new JsonDeserializationSchema<Order>())
        .setPartitionedByRecordKey()
        .build(),
      WatermarkStrategy.forBoundedOutOfOrderness<Order>(seconds(10)).withTimestampAssigner((o) => o.timestamp),
      'orders',
    )
    .keyBy((order) => order.category)
    .window(TumblingEventTimeWindows.of(WINDOW))
    .sum('amount')
    .map((total, { timestamp }) => ({ category: total.category, windowStart: (timestamp ?? 0) + 1 - WINDOW, amount: total.amount }))
    .sinkTo(
      KafkaSink.builder<{ category: string; windowStart: number; amount: number }>()
        .setBootstrapServers(testBrokers())
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<{ category: string; windowStart: number; amount: number }>()
            .setTopic(output)
            .setKeySerializationSchema((a) => a.category)
            .setValueSerializationSchema({ serialize: (a) => JSON.stringify(a) })
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(`${name}-tx`)
        .build(),
    );
  return env;
}

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

async function schedule(seedValue: number) {
  const random = seededRandom(seedValue);
  const name = uniqueName('eo');
  const input = `${name}-orders`;
  const output = `${name}-totals`;
  await admin.ensureTopics([
    { topic: input, partitions: PARTITIONS },
    { topic: output, partitions: 2 },
  ]);

  const orders = generateOrders({ count: 3_000, seed: seedValue, categories: 6 });
  const closing = closingOrders(orders, PARTITIONS);
  const producer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await producer.write(
    [...orders, ...closing].map(({ late: _late, ...order }) => ({
      topic: input,
      partition: Number(order.category.split('-')[1]) % PARTITIONS,
      key: order.category,
      value: JSON.stringify(order),
    })),
  );
  await producer.flush();
  await producer.close();

  const plan = planPipeline(pipeline(input, output, name));
  const client = createDocumentClient(dynamo.clientOptions);
  await ensureStateTable(client, name);
  const store = new DynamoShardStore(client, name);
  const coordinator = new DynamoCoordinatorStore(client, name);
  let now = 1_000_000;
  const clock = () => now;
  const crashes: Record<string, number> = {};
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
  const stageId = plan.stages[0]?.id ?? '';

  /** Retries like Lambda: a failed invocation runs again with the same input. */
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
    await runCoordinator({ plan, store, coordinator, shards, clock, tick: async (target) => {
        await invoke(target, []);
      },
    });
    await commitCompletedCheckpoints({ plan, store, coordinator, committer, shards });
  };

  const ends = new Map((await admin.describeTopics([input]))[0]?.partitions.map((p) => [p.partition, Number(p.high)]));
  const positions = new Map(shards.map((s) => [s.partition, 0]));
  const faults = { redelivered: 0, gaps: 0 };
  while ([...positions].some(([partition, position]) => position < (ends.get(partition) ?? 0))) {
    for (const target of shards) {
      const position = positions.get(target.partition) ?? 0;
      const end = ends.get(target.partition) ?? 0;
      if (position >= end) continue;
      const to = Math.min(end, position + 20 + Math.floor(random() * 150));
      let records = await reader.read({ topic: input, partition: target.partition, from: position, to });
      if (random() < 0.1 && records.length > 5) {
        faults.gaps++;
        records = records.slice(3);
      }
      await invoke(target, records);
      if (random() < 0.1) {
        faults.redelivered++;
        await invoke(target, records);
      }
      positions.set(target.partition, to);
      now += 500;
    }
    if (random() < 0.3) await coordinate();
  }
  // Two more checkpoints: everything written so far is covered and committed.
  for (let round = 0; round < 6; round++) await coordinate();

  await processor.close();
  await committer.close();
  await reader.close();
  const expected = expectedTotals(orders, WINDOW);
  const consumed = await consumeAll(output, { expected: expected.size });
  return { consumed, expected, crashes, faults, stageId };
}

describe('the serverless runtime, exactly once', () => {
  it.each([11, 12, 13])(
    'writes exactly the expected totals through crashes at every step, redeliveries and gaps (seed %i)',
    async (seedValue) => {
      const { consumed, expected, crashes, faults } = await schedule(seedValue);
      const totals = new Map<string, number>();
      for (const message of consumed) {
        const aggregate = JSON.parse(message.value ?? '') as { category: string; windowStart: number; amount: number };
        const key = `${aggregate.category}@${aggregate.windowStart}`;
        expect(totals.has(key), `seed ${seedValue}: ${key} was written twice`).toBe(false);
        totals.set(key, aggregate.amount);
      }
      expect(totals, `seed ${seedValue}`).toEqual(expected);
      expect(Object.values(crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
      expect(faults.redelivered + faults.gaps).toBeGreaterThan(0);
    },
    240_000,
  );
});
