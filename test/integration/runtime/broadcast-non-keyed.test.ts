// A non-keyed stream connected with a broadcast stream, on the serverless runtime with three
// shards: each rule reaches every shard once, each order is checked once, on the shard of the
// partition its record came from (Flink's forward), and the output is exactly what a loop says.
import { describe, expect, it } from 'vitest';
import {
  JsonDeserializationSchema,
  KafkaSource,
  MapStateDescriptor,
  seconds,
  StreamExecutionEnvironment,
  WatermarkStrategy,
} from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { planTopics } from '../../../lib/plan/topics.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exactlyOnceLines } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const PARTITIONS = 3;

type Input = { kind: 'rule'; category: string; max: number } | { kind: 'order'; id: number; category: string; amount: number; partition: number };
const LIMITS = new MapStateDescriptor<string, number>('limits');

function pipeline(name: string) {
  const env = StreamExecutionEnvironment.create({ name }).setParallelism(PARTITIONS);
  env.enableCheckpointing(seconds(10));
  const input = env.fromSource(
    KafkaSource.builder<Input>()
      .setBootstrapServers(testBrokers())
      .setTopics(`${name}-input`)
      .setGroupId(name)
      .setValueOnlyDeserializer(new JsonDeserializationSchema<Input>())
      .build(),
    WatermarkStrategy.noWatermarks(),
    'input',
  );
  const orders = input.flatMap((e) => (e.kind === 'order' ? [e] : []));
  const rules = input.flatMap((e) => (e.kind === 'rule' ? [e] : [])).broadcast(LIMITS);
  orders
    .connect(rules)
    .process<string>({
      processElement: (order, { getBroadcastState }, out) => {
        const max = getBroadcastState(LIMITS).get(order.category);
        out.collect(`order ${order.id}${max !== undefined && order.amount > max ? ' over limit' : ''}`);
      },
      processBroadcastElement: (rule, { getBroadcastState }, out) => {
        getBroadcastState(LIMITS).put(rule.category, rule.max);
        out.collect(`rule ${rule.category}`);
      },
    })
    .sinkTo(exactlyOnceLines(name, testBrokers()));
  return env;
}

async function produce(topic: string, inputs: readonly { value: Input; partition: number }[]) {
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await writer.write(inputs.map(({ value, partition }) => ({ topic, partition, key: null, value: JSON.stringify(value) })));
  await writer.close();
}

describe('a broadcast stream connected to a non-keyed stream', () => {
  it('reaches every shard once, and each other element once on the shard of its partition', async () => {
    const name = uniqueName('broadcast-rules');
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    const clock = { now: Date.now() };
    const runtime = new PipelineRuntime(
      pipeline(name),
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => clock.now },
    );
    const [repartition] = planTopics(runtime.plan).repartitions;
    if (!repartition) throw new Error('a broadcast connection repartitions');
    expect(repartition.partitions).toBe(PARTITIONS);
    await environment().admin.ensureTopics([
      { topic: `${name}-input`, partitions: PARTITIONS },
      { topic: `${name}-out`, partitions: 1 },
      { topic: repartition.topic, partitions: repartition.partitions },
    ]);
    const driver = new LambdaDriver(runtime, clock);
    const orders = Array.from({ length: 30 }, (_, id) => {
      const partition = id % PARTITIONS;
      return { value: { kind: 'order', id, category: id % 2 === 0 ? 'books' : 'toys', amount: id * 10, partition } as const, partition };
    });
    const settle = async () => {
      for (let stage = 0; stage < 3; stage++) {
        await driver.drain(4);
        await driver.checkpoint();
      }
    };
    try {
      // The rules first, committed to every shard, so that every order meets them.
      await produce(`${name}-input`, [
        { value: { kind: 'rule', category: 'books', max: 100 }, partition: 0 },
        { value: { kind: 'rule', category: 'toys', max: 200 }, partition: 2 },
      ]);
      await settle();
      await produce(`${name}-input`, orders);
      await settle();
    } finally {
      await driver.close();
      await runtime.close();
    }

    const expected = [
      ...Array.from({ length: PARTITIONS }, () => ['rule books', 'rule toys']).flat(),
      ...orders.map(({ value }) => `order ${value.id}${value.amount > (value.category === 'books' ? 100 : 200) ? ' over limit' : ''}`),
    ];
    const written = await consumeAll(`${name}-out`, { expected: expected.length });
    expect(written.map((m) => m.value).sort()).toEqual(expected.sort());

    // Where each element crossed: an order to the partition of its record, a rule to every one.
    const crossed = (await consumeAll(repartition.topic, { expected: orders.length + 2 * PARTITIONS })).map((m) => ({
      partition: m.partition,
      element: (JSON.parse(m.value ?? '') as { v: { input: 1 | 2; value: Input } }).v,
    }));
    for (const { partition, element } of crossed) {
      if (element.input === 1 && element.value.kind === 'order') expect(partition, `order ${element.value.id}`).toBe(element.value.partition);
    }
    const rulesPerPartition = crossed.filter(({ element }) => element.input === 2).map(({ partition }) => partition);
    expect(rulesPerPartition.sort()).toEqual([0, 0, 1, 1, 2, 2]);
  }, 120_000);
});
