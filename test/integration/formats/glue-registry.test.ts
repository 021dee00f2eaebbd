// The AWS Glue Schema Registry formats against moto's Glue (lib/offline/emulators.ts): round trips
// in Avro and JSON Schema, zlib payloads, Avro schema evolution, a schema created and a version
// registered by the sink, records the event-source mapping validated against Glue, and each bad
// input's error. moto does not check compatibility (a version Glue would refuse is not tested here).
import { CreateRegistryCommand, GlueClient } from '@aws-sdk/client-glue';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATE_SCHEMA, ORDER_SCHEMA, ORDER_SCHEMA_V1, type Order } from '../../../examples/order-aggregation-avro.js';
import { orderAggregation, type OrderAggregate } from '../../../examples/order-aggregation.js';
import { decodeKafkaEvent } from '../../../lib/aws/kafka-event.js';
import { glueSchemaRegistryFromEnvironment } from '../../../lib/aws/schema-registry.js';
import {
  GlueSchemaRegistryAvroDeserializationSchema,
  GlueSchemaRegistryAvroSerializationSchema,
  GlueSchemaRegistryJsonDeserializationSchema,
  GlueSchemaRegistryJsonSerializationSchema,
  SchemaRegistryUnavailableError,
  UnknownSchemaError,
  type GlueSchemaRegistryOptions,
} from '../../../lib/formats/index.js';
import { startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';
import { uniqueName } from '../../helpers/kafka-io.js';

let moto: Emulator;
let registry: GlueSchemaRegistryOptions;

beforeAll(async () => {
  moto = await startMotoServer();
  const { endpoint, region, credentials } = moto.clientOptions as { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  registry = { registryName: 'orders-registry', endpoint, region, credentials };
  await new GlueClient(moto.clientOptions).send(new CreateRegistryCommand({ RegistryName: 'orders-registry' }));
}, 60_000);

afterAll(async () => {
  await moto.close();
});

/** Reads `values` as a batch does: prepared together, then each deserialized. */
async function readBatch<T>(schema: { prepare(values: readonly (Buffer | null)[]): Promise<void>; deserialize(value: Buffer | null): T }, values: Buffer[]) {
  await schema.prepare(values);
  return values.map((value) => schema.deserialize(value));
}

const order = { orderId: 'o-1', category: 'books', amount: 12.5, timestamp: Date.now() };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function versionIdOf(value: Buffer): string {
  const hex = value.subarray(2, 18).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('Avro in the AWS Glue wire format', () => {
  it('creates the schema, writes header byte 3, no compression and its version id, and reads the record back', async () => {
    const serializer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA, registry);
    await serializer.open();
    const value = serializer.serialize({ ...order, channel: 'app' });
    expect([value[0], value[1]]).toEqual([3, 0]);
    expect(versionIdOf(value)).toMatch(UUID);
    const [read] = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), [value]);
    expect({ ...read }).toEqual({ ...order, channel: 'app' });
  });

  it('writes and reads zlib-compressed payloads (compression byte 5)', async () => {
    const serializer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA, { ...registry, compression: 'ZLIB' });
    await serializer.open();
    const long = { ...order, category: 'books'.repeat(200), channel: 'app' };
    const value = serializer.serialize(long);
    expect(value[1]).toBe(5);
    expect(value.length).toBeLessThan(200);
    const [read] = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), [value]);
    expect({ ...read }).toEqual(long);
  });

  it('registers a second version under the same schema name and reads both with either reader schema', async () => {
    const name = uniqueName('orders');
    const v1 = GlueSchemaRegistryAvroSerializationSchema.forGeneric(name, ORDER_SCHEMA_V1, registry);
    const v2 = GlueSchemaRegistryAvroSerializationSchema.forGeneric(name, ORDER_SCHEMA, registry);
    await v1.open();
    await v2.open();
    const values = [v1.serialize(order), v2.serialize({ ...order, orderId: 'o-2', channel: 'store' })];
    expect(versionIdOf(values[0] as Buffer)).not.toBe(versionIdOf(values[1] as Buffer));
    // A second sink of the same schema finds its version instead of registering another.
    const again = GlueSchemaRegistryAvroSerializationSchema.forGeneric(name, ORDER_SCHEMA_V1, registry, { autoRegister: false });
    await again.open();
    expect(versionIdOf(again.serialize(order))).toBe(versionIdOf(values[0] as Buffer));
    const newer = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), values);
    expect(newer.map((o) => ({ ...o }))).toEqual([
      { ...order, channel: 'web' },
      { ...order, orderId: 'o-2', channel: 'store' },
    ]);
    const older = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA_V1, registry), values);
    expect(older.map((o) => ({ ...o }))).toEqual([order, { ...order, orderId: 'o-2' }]);
  });

  it('reads a value framed by hand to the format of AWS’s serializers', async () => {
    const serializer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA_V1, registry);
    await serializer.open();
    const versionId = versionIdOf(serializer.serialize(order));
    // Avro's binary encoding of the order, and the header: version 3, compression 0, the UUID's 16 bytes.
    const payload = Buffer.concat([
      Buffer.from([6]), Buffer.from('o-1'), Buffer.from([10]), Buffer.from('books'),
      Buffer.from(new Float64Array([12.5]).buffer), zigzag(order.timestamp),
    ]);
    const value = Buffer.concat([Buffer.from([3, 0]), Buffer.from(versionId.replaceAll('-', ''), 'hex'), payload]);
    const [read] = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA_V1, registry), [value]);
    expect({ ...read }).toEqual(order);
  });

  it('fails to open a sink that may not register when the registry lacks its schema, and one whose registry does not exist', async () => {
    const name = uniqueName('orders');
    await expect(GlueSchemaRegistryAvroSerializationSchema.forGeneric(name, ORDER_SCHEMA, registry, { autoRegister: false }).open()).rejects.toThrow(
      `Glue schema "${name}" in registry "orders-registry" does not hold the sink's schema: register it, or let the serialization schema register it (autoRegister: true)`,
    );
    await expect(GlueSchemaRegistryAvroSerializationSchema.forGeneric(name, ORDER_SCHEMA, { ...registry, registryName: 'no-such-registry' }).open()).rejects.toThrow(
      'The AWS Glue Schema Registry has no registry "no-such-registry": create it, or name another in the options\' registryName',
    );
  });

  it('names a schema version Glue does not hold, a value of another wire format and a truncated one, each as a bad record', async () => {
    const unknown = Buffer.concat([Buffer.from([3, 0]), Buffer.from(randomUUID().replaceAll('-', ''), 'hex'), Buffer.from([0])]);
    const reader = GlueSchemaRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, registry);
    await reader.prepare([unknown]);
    expect(() => reader.deserialize(unknown)).toThrow(UnknownSchemaError);
    expect(() => reader.deserialize(unknown)).toThrow(/schema version [0-9a-f-]{36} is not in the AWS Glue Schema Registry/);
    const confluent = Buffer.from([0, 0, 0, 0, 7, 2]);
    expect(() => reader.deserialize(confluent)).toThrow(
      "its value does not start with the AWS Glue Schema Registry's header version byte 3 (it starts with byte 0): it was not written by a Glue Schema Registry serializer",
    );
    expect(() => reader.deserialize(Buffer.from([3, 0, 1, 2]))).toThrow("its value is truncated: 4 bytes, fewer than the Glue wire format's 18-byte header");
    expect(() => reader.deserialize(Buffer.concat([Buffer.from([3, 5]), unknown.subarray(2)]))).toThrow(/its payload is marked zlib-compressed but does not inflate/);
  });

  it('fails the batch, not the record, when Glue cannot be reached', async () => {
    const reader = GlueSchemaRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, { ...registry, endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });
    const value = Buffer.concat([Buffer.from([3, 0]), Buffer.from(randomUUID().replaceAll('-', ''), 'hex'), Buffer.from([0])]);
    await expect(reader.prepare([value])).rejects.toThrow(SchemaRegistryUnavailableError);
    await expect(reader.prepare([value])).rejects.toThrow(/Could not look up schema version .* at the AWS Glue Schema Registry: .*the batch fails and is retried, and no record is skipped/);
  });

  it('reads a record the event-source mapping validated against Glue, its header stripped', async () => {
    const serializer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA, registry);
    await serializer.open();
    const written = serializer.serialize({ ...order, channel: 'app' });
    const event = {
      eventSource: 'SelfManagedKafka',
      bootstrapServers: '127.0.0.1:9092',
      records: {
        'orders-0': [
          {
            topic: 'orders', partition: 0, offset: 7, timestamp: order.timestamp, timestampType: 'CREATE_TIME',
            value: written.subarray(18).toString('base64'), valueSchemaMetadata: { dataFormat: 'AVRO', schemaId: versionIdOf(written) }, headers: [],
          },
        ],
      },
    };
    const value = decodeKafkaEvent(event as never).partitions[0]?.records[0]?.value as Buffer;
    expect(value).toEqual(written);
    const [read] = await readBatch(GlueSchemaRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), [value]);
    expect({ ...read }).toEqual({ ...order, channel: 'app' });
  });
});

describe('JSON Schema in the AWS Glue wire format', () => {
  const schema = {
    type: 'object',
    properties: { orderId: { type: 'string' }, amount: { type: 'number', minimum: 0 } },
    required: ['orderId', 'amount'],
  };

  it('validates both ways, naming what failed', async () => {
    const serializer = GlueSchemaRegistryJsonSerializationSchema.of<{ orderId: string; amount: number }>(uniqueName('orders'), schema, registry);
    await serializer.open();
    const value = serializer.serialize({ orderId: 'o-1', amount: 3 });
    expect(value.subarray(18).toString()).toBe('{"orderId":"o-1","amount":3}');
    expect(() => serializer.serialize({ orderId: 'o-2', amount: -1 })).toThrow(/the element does not fit the JSON Schema schema of Glue schema "[^"]+" \(id [0-9a-f-]{36}\)/);
    const reader = GlueSchemaRegistryJsonDeserializationSchema.of<{ orderId: string; amount: number }>(registry);
    const invalid = Buffer.concat([value.subarray(0, 18), Buffer.from('{"orderId":"o-3"}')]);
    await reader.prepare([value, invalid]);
    expect(reader.deserialize(value)).toEqual({ orderId: 'o-1', amount: 3 });
    expect(() => reader.deserialize(invalid)).toThrow(/its JSON Schema payload does not match its writer schema \(id [0-9a-f-]{36}\)/);
    await expect(readBatch(GlueSchemaRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, registry), [value])).rejects.toThrow(/is JSON Schema, and this deserializer reads Avro/);
  });
});

describe('the PipelineTestHarness', () => {
  it('runs a pipeline in Glue Avro with sendAsync', async () => {
    const aggregatesTopic = uniqueName('aggregates');
    const formats = {
      ordersTopic: 'orders',
      aggregatesTopic,
      orders: GlueSchemaRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry),
      aggregates: GlueSchemaRegistryAvroSerializationSchema.forSpecific<OrderAggregate>(aggregatesTopic, AGGREGATE_SCHEMA, registry),
    };
    const harness = new PipelineTestHarness(orderAggregation({ name: 'harness-glue', partitionedByCategory: false, formats }));
    const writer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA_V1, registry);
    await writer.open();
    const windowStart = Date.UTC(2026, 11, 1);
    const placed = [2, 3].map((amount, i) => ({ value: writer.serialize({ orderId: `o-${i}`, category: 'books', amount, timestamp: windowStart + i * 1_000 }) }));
    (await harness.sendAsync('orders', placed)).finish();
    const reader = GlueSchemaRegistryAvroDeserializationSchema.forSpecific<OrderAggregate>(AGGREGATE_SCHEMA, registry);
    const values = harness.output(aggregatesTopic).map((record) => record.value as Buffer);
    await reader.prepare(values);
    expect(values.map((value) => ({ ...reader.deserialize(value) }))).toEqual([{ category: 'books', windowStart, windowEnd: windowStart + 300_000, amount: 5 }]);
  });
});

describe('the Glue registry from the environment', () => {
  it('takes the registry name a deployment sets, and says what to set without one', async () => {
    const options = glueSchemaRegistryFromEnvironment({ env: { GLUE_SCHEMA_REGISTRY_NAME: 'orders-registry' }, ...registry, registryName: 'offline' });
    expect(options.registryName).toBe('orders-registry');
    const serializer = GlueSchemaRegistryAvroSerializationSchema.forGeneric(uniqueName('orders'), ORDER_SCHEMA_V1, options);
    await serializer.open();
    expect(serializer.serialize(order)[0]).toBe(3);
    expect(glueSchemaRegistryFromEnvironment({ env: {}, registryName: 'offline' }).registryName).toBe('offline');
    expect(() => glueSchemaRegistryFromEnvironment({ env: {} })).toThrow('GLUE_SCHEMA_REGISTRY_NAME is not set: deploy with --param glueSchemaRegistryName=orders-registry');
  });
});

/** Avro's zig-zag varint encoding of a long. */
function zigzag(n: number): Buffer {
  let value = BigInt(n) >= 0n ? BigInt(n) << 1n : (-BigInt(n) << 1n) - 1n;
  const bytes: number[] = [];
  while (value >= 0x80n) {
    bytes.push(Number((value & 0x7fn) | 0x80n));
    value >>= 7n;
  }
  bytes.push(Number(value));
  return Buffer.from(bytes);
}
