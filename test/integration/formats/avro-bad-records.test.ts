// Registry formats in the runtime, on the real broker, registry and dynalite: records it cannot
// read go to the bad-record policy naming what is wrong, and a registry that cannot be reached
// fails the batch, which then runs whole once the registry answers.
import { describe, expect, inject, it } from 'vitest';
import { BadRecordPolicy, minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import type { KafkaRecord } from '../../../lib/kafka/records.js';
import { mskEvent } from '../../../lib/offline/msk-event.js';
import { Headers } from '../../../lib/runtime/stage-executor.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { ConfluentRegistryAvroDeserializationSchema } from '../../../lib/formats/index.js';
import { ORDER_SCHEMA } from '../../../examples/order-aggregation-avro.js';
import { avroOrders } from '../../helpers/avro-orders.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { inProcessFunctions, useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const registry = inject('schemaRegistryUrl');
const CLUSTER = 'arn:aws:kafka:eu-west-1:123456789012:cluster/test/abc';

async function readLog(topic: string, to: number): Promise<KafkaRecord[]> {
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  try {
    return await reader.read({ topic, partition: 0, from: 0, to });
  } finally {
    await reader.close();
  }
}

describe('registry formats in the runtime', () => {
  it('dead-letters records without the magic byte, with an unknown schema id, or cut short, naming each', async () => {
    const name = uniqueName('avro-bad');
    const input = `${name}-orders`;
    const deadLetters = `${name}-dead`;
    await environment().admin.ensureTopics([input, `${name}-out`, deadLetters].map((topic) => ({ topic, partitions: 1 })));
    const avro = await avroOrders(registry, input, `${name}-out`);
    const orders = generateOrders({ count: 20, seed: 3, categories: 2 }).map(({ late: _late, ...order }) => order);
    const good = orders.map((order, index) => avro.encode(order, index, orders.length));
    const bad = [Buffer.from(JSON.stringify(orders[0])), Buffer.from([0, 0x7f, 0, 0, 9, 1, 2]), good[0]?.subarray(0, 9) ?? Buffer.alloc(0)];
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    const keyed = (value: Buffer, index: number) => ({ topic: input, partition: 0, key: orders[index]?.category ?? null, value });
    await writer.write([...good.slice(0, 10).map(keyed), ...bad.map((value) => keyed(value, 0)), ...good.slice(10).map((value, index) => keyed(value, index + 10))]);
    await writer.flush();
    await writer.close();

    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    let now = Date.now();
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5), formats: avro.formats, badRecordPolicy: BadRecordPolicy.deadLetter(deadLetters) }),
      { tableName: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
      { clock: () => now },
    );
    const { processor, coordinator } = inProcessFunctions(runtime, () => now);
    const report = await processor(mskEvent(await readLog(input, 23), CLUSTER, testBrokers()));
    expect(report.batches[0]).toMatchObject({ recordsIn: 23 });
    // The dead letters are in the batch's transaction, which the checkpoint's commit makes readable.
    for (let round = 0; round < 4; round++) {
      now += 10_000;
      await coordinator();
    }
    await runtime.close();

    const letters = await readLog(deadLetters, 3);
    const reasons = letters.map((letter) => ({
      offset: letter.headers.find((h) => h.key === Headers.offset)?.value?.toString(),
      error: letter.headers.find((h) => h.key === Headers.error)?.value?.toString() ?? '',
    }));
    expect(reasons.map((r) => r.offset)).toEqual(['10', '11', '12']);
    expect(reasons[0]?.error).toContain("its value does not start with the Confluent wire format's magic byte 0 (it starts with byte 123)");
    expect(reasons[1]?.error).toMatch(/schema id 2130706441 is not in the registry at .*: the record was written against another registry, or its schema was deleted/);
    expect(reasons[2]?.error).toMatch(/its Avro payload does not match its writer schema \(id \d+\): truncated buffer/);
    // The bad records' bytes go to the dead letters as they came.
    expect(letters.map((letter) => letter.value)).toEqual(bad);
  });

  it('fails the batch while the registry cannot be reached, skipping nothing, and runs it whole once it answers', async () => {
    const name = uniqueName('avro-down');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([input, `${name}-out`].map((topic) => ({ topic, partitions: 1 })));
    const avro = await avroOrders(registry, input, `${name}-out`);
    const orders = generateOrders({ count: 10, seed: 4, categories: 2 }).map(({ late: _late, ...order }) => order);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(orders.map((order, index) => ({ topic: input, partition: 0, key: order.category, value: avro.encode(order, index, orders.length) })));
    await writer.flush();
    await writer.close();
    const event = mskEvent(await readLog(input, 10), CLUSTER, testBrokers());
    await ensureStateTable(createDocumentClient(environment().dynamo), name);

    const unreachable = { url: 'http://127.0.0.1:9', retries: 1 };
    const runtimeWith = (formats: typeof avro.formats) =>
      new PipelineRuntime(orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5), formats }), {
        tableName: name,
        kafka: { brokers: testBrokers() },
        dynamodb: environment().dynamo,
      });
    const failing = runtimeWith({ ...avro.formats, orders: ConfluentRegistryAvroDeserializationSchema.forSpecific(ORDER_SCHEMA, unreachable) });
    await expect(inProcessFunctions(failing, Date.now).processor(event)).rejects.toThrow(
      /Could not look up schema id \d+ at the schema registry http:\/\/127\.0\.0\.1:9: .*the batch fails and is retried, and no record is skipped/,
    );
    await failing.close();

    const working = runtimeWith(avro.formats);
    const report = await inProcessFunctions(working, Date.now).processor(event);
    expect(report.batches[0]).toMatchObject({ recordsIn: 10 });
    await working.close();
  });
});
