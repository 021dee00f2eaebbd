// The registry-aware formats against a real schema registry (Apicurio, test/setup/schema-registry.ts):
// round trips in Avro, Protobuf and JSON Schema, Avro schema evolution, one lookup per schema id
// per container, and each bad input's error.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ConfluentRegistryAvroDeserializationSchema,
  ConfluentRegistryAvroSerializationSchema,
  ConfluentRegistryJsonSchemaDeserializationSchema,
  ConfluentRegistryJsonSchemaSerializationSchema,
  ConfluentRegistryProtobufDeserializationSchema,
  ConfluentRegistryProtobufSerializationSchema,
  SchemaRegistryUnavailableError,
  SubjectNameStrategy,
} from '../../../lib/formats/index.js';
import { AGGREGATE_SCHEMA, ORDER_SCHEMA, ORDER_SCHEMA_V1, type Order } from '../../../examples/order-aggregation-avro.js';
import { orderAggregation, type OrderAggregate } from '../../../examples/order-aggregation.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';
import { uniqueName } from '../../helpers/kafka-io.js';

const registry = inject('schemaRegistryUrl');

/** Reads `values` as a batch does: prepared together, then each deserialized. */
async function readBatch<T>(schema: { prepare(values: readonly (Buffer | null)[]): Promise<void>; deserialize(value: Buffer | null): T }, values: Buffer[]) {
  await schema.prepare(values);
  return values.map((value) => schema.deserialize(value));
}

const order = { orderId: 'o-1', category: 'books', amount: 12.5, timestamp: Date.now() };

describe('Avro in the Confluent wire format', () => {
  it('writes a registered schema id and reads the record back', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const serializer = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA, registry);
    await serializer.open();
    const value = serializer.serialize({ ...order, channel: 'app' });
    expect(value[0]).toBe(0);
    const [read] = await readBatch(ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), [value]);
    expect({ ...read }).toEqual({ ...order, channel: 'app' });
  });

  it('reads records of an older writer schema with the reader schema, a new field taking its default', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const v1 = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA_V1, registry);
    const v2 = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA, registry);
    await v1.open();
    await v2.open();
    const values = [v1.serialize(order), v2.serialize({ ...order, orderId: 'o-2', channel: 'store' })];
    expect(values[0]?.readInt32BE(1)).not.toBe(values[1]?.readInt32BE(1));
    const newer = await readBatch(ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry), values);
    expect(newer.map((o) => ({ ...o }))).toEqual([
      { ...order, channel: 'web' },
      { ...order, orderId: 'o-2', channel: 'store' },
    ]);
    // And forward: the old reader skips the field it does not know.
    const older = await readBatch(ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA_V1, registry), values);
    expect(older.map((o) => ({ ...o }))).toEqual([order, { ...order, orderId: 'o-2' }]);
  });

  it('fails a record whose writer schema cannot be resolved into the reader schema, naming both', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const writer = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA_V1, registry);
    await writer.open();
    const value = writer.serialize(order);
    const withoutDefault = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'orderId', type: 'string' }, { name: 'region', type: 'string' }] };
    const reader = ConfluentRegistryAvroDeserializationSchema.forGeneric(withoutDefault, registry);
    await reader.prepare([value]);
    expect(() => reader.deserialize(value)).toThrow(
      new RegExp(`its writer schema \\(id ${value.readInt32BE(1)}, shop.Order\\) cannot be read as the reader schema shop.Order: .*region.*give a new field a default`),
    );
  });

  it('rejects an element that does not fit the sink schema, naming the subject', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const serializer = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, AGGREGATE_SCHEMA, registry);
    await serializer.open();
    expect(() => serializer.serialize({ category: 'books', windowStart: 0, windowEnd: 1, amount: 'twelve' })).toThrow(
      new RegExp(`the element does not fit the Avro schema of subject "${subject}" \\(id \\d+\\): invalid "double": "twelve"`),
    );
  });

  it("fails to open a sink whose schema the subject's compatibility rule rejects, saying how to evolve it", async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    await ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA_V1, registry).open();
    const rule = await fetch(`${registry}/config/${subject}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    expect(rule.ok).toBe(true);
    // A new field without a default: readers of the new schema cannot read the old records.
    const breaking = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'orderId', type: 'string' }, { name: 'region', type: 'string' }] };
    await expect(ConfluentRegistryAvroSerializationSchema.forGeneric(subject, breaking, { url: registry, retries: 0 }).open()).rejects.toThrow(
      new RegExp(`rejects the sink's schema under subject "${subject}" as incompatible with the versions it holds \\(409 .*\\): evolve the schema by the subject's compatibility rule`),
    );
  });

  it('fails to open a sink that may not register when its subject lacks the schema', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const serializer = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA, registry, { autoRegister: false });
    await expect(serializer.open()).rejects.toThrow(`Subject "${subject}" of the registry at ${registry} does not hold the sink's schema`);
  });
});

describe('bad input', () => {
  const reader = ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, registry);

  it('names a value without the magic byte', async () => {
    const value = Buffer.from('{"orderId":"o-1"}');
    await reader.prepare([value]);
    expect(() => reader.deserialize(value)).toThrow(
      "its value does not start with the Confluent wire format's magic byte 0 (it starts with byte 123): it was not written by a registry-aware serializer",
    );
  });

  it('names a value shorter than the header, and a payload cut short', async () => {
    expect(() => reader.deserialize(Buffer.from([0, 0, 1]))).toThrow('its value is truncated: 3 bytes, fewer than the wire format');
    const serializer = ConfluentRegistryAvroSerializationSchema.forGeneric(SubjectNameStrategy.topicName(uniqueName('avro')), ORDER_SCHEMA, registry);
    await serializer.open();
    const whole = serializer.serialize({ ...order, channel: 'web' });
    const cut = whole.subarray(0, whole.length - 4);
    await reader.prepare([cut]);
    expect(() => reader.deserialize(cut)).toThrow(`its Avro payload does not match its writer schema (id ${whole.readInt32BE(1)}): truncated buffer`);
  });

  it('names a schema id the registry does not hold', async () => {
    const value = Buffer.from([0, 0x7f, 0, 0, 1, 2]);
    await reader.prepare([value]);
    expect(() => reader.deserialize(value)).toThrow(
      new RegExp(`schema id 2130706433 is not in the registry at ${registry.replace(/[.]/g, '\\.')} \\(.*\\): the record was written against another registry, or its schema was deleted`),
    );
  });

  it('fails the batch, after retries, when the registry cannot be reached', async () => {
    const unreachable = ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, { url: 'http://127.0.0.1:9', retries: 1 });
    const prepared = unreachable.prepare([Buffer.from([0, 0, 0, 0, 1, 2])]);
    await expect(prepared).rejects.toBeInstanceOf(SchemaRegistryUnavailableError);
    await expect(prepared).rejects.toThrow(
      /Could not look up schema id 1 at the schema registry http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED.*the batch fails and is retried, and no record is skipped/,
    );
  });

  it('names a record of another format', async () => {
    const serializer = ConfluentRegistryJsonSchemaSerializationSchema.of(SubjectNameStrategy.topicName(uniqueName('json')), { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, registry);
    await serializer.open();
    const value = serializer.serialize({ any: 'thing' });
    await reader.prepare([value]);
    expect(() => reader.deserialize(value)).toThrow(`its schema (id ${value.readInt32BE(1)}) is JSON Schema, and this deserializer reads Avro`);
  });
});

describe('Protobuf and JSON Schema', () => {
  it('round-trips a Protobuf message as its JSON mapping, with the first message index', async () => {
    const proto = 'syntax = "proto3";\npackage shop;\nmessage Order {\n  string order_id = 1;\n  string category = 2;\n  double amount = 3;\n  int64 timestamp = 4;\n}\n';
    const serializer = ConfluentRegistryProtobufSerializationSchema.of(SubjectNameStrategy.topicName(uniqueName('proto')), proto, registry);
    await serializer.open();
    const value = serializer.serialize({ orderId: 'o-1', category: 'books', amount: 12.5, timestamp: 1_700_000_000_000 });
    expect(value[5]).toBe(0);
    const [read] = await readBatch(ConfluentRegistryProtobufDeserializationSchema.of(registry), [value]);
    expect(read).toEqual({ orderId: 'o-1', category: 'books', amount: 12.5, timestamp: '1700000000000' });
  });

  it('validates JSON against its schema both ways, naming what failed', async () => {
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };
    const serializer = ConfluentRegistryJsonSchemaSerializationSchema.of<{ amount: unknown }>(SubjectNameStrategy.topicName(uniqueName('json')), schema, registry);
    await serializer.open();
    const value = serializer.serialize({ amount: 3 });
    const reader = ConfluentRegistryJsonSchemaDeserializationSchema.of<{ amount: number }>(registry);
    expect(await readBatch(reader, [value])).toEqual([{ amount: 3 }]);
    expect(() => serializer.serialize({ amount: 'three' })).toThrow(/the element does not fit the JSON Schema schema of subject .*: invalid payload/);
    const forged = Buffer.concat([value.subarray(0, 5), Buffer.from('{"amount":"three"}')]);
    expect(() => reader.deserialize(forged)).toThrow(/its JSON Schema payload does not match its writer schema \(id \d+\): invalid payload/);
  });
});

describe('the PipelineTestHarness', () => {
  it('runs a pipeline in Avro with sendAsync: the deserializer prepared, the sink opened', async () => {
    const aggregatesTopic = uniqueName('aggregates');
    const formats = {
      ordersTopic: 'orders',
      aggregatesTopic,
      orders: ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry),
      aggregates: ConfluentRegistryAvroSerializationSchema.forSpecific<OrderAggregate>(SubjectNameStrategy.topicName(aggregatesTopic), AGGREGATE_SCHEMA, registry),
    };
    const harness = new PipelineTestHarness(orderAggregation({ name: 'harness-avro', partitionedByCategory: false, formats }));
    const writer = ConfluentRegistryAvroSerializationSchema.forGeneric(SubjectNameStrategy.topicName(uniqueName('orders')), ORDER_SCHEMA_V1, registry);
    await writer.open();
    const windowStart = Date.UTC(2026, 11, 1);
    const placed = [2, 3].map((amount, i) => ({ value: writer.serialize({ orderId: `o-${i}`, category: 'books', amount, timestamp: windowStart + i * 1_000 }) }));
    expect(() => new PipelineTestHarness(orderAggregation({ name: 'harness-avro-sync', partitionedByCategory: false, formats })).send('orders', placed).finish()).toThrow(
      /schema of subject "[^"]+" was not opened \(in a PipelineTestHarness, send with sendAsync\)/,
    );
    (await harness.sendAsync('orders', placed)).finish();
    const reader = ConfluentRegistryAvroDeserializationSchema.forSpecific<OrderAggregate>(AGGREGATE_SCHEMA, registry);
    const values = harness.output(aggregatesTopic).map((record) => record.value as Buffer);
    await reader.prepare(values);
    expect(values.map((value) => ({ ...reader.deserialize(value) }))).toEqual([{ category: 'books', windowStart, windowEnd: windowStart + 300_000, amount: 5 }]);
  });
});

describe('the registry client', () => {
  let proxy: Server;
  let lookups = 0;
  let proxied = '';
  const authorizations = new Set<string>();

  beforeAll(async () => {
    // A counting pass-through in front of the real registry.
    const target = new URL(registry);
    proxy = createServer((incoming, answer) => {
      if (/\/schemas\/ids\/\d+/.test(incoming.url ?? '')) lookups++;
      authorizations.add(incoming.headers.authorization ?? 'none');
      const forwarded = request({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (response) => {
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      });
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${target.pathname}`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it('looks each schema id up once per container, however many records and batches carry it', async () => {
    const subject = SubjectNameStrategy.topicName(uniqueName('avro'));
    const v1 = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA_V1, registry);
    const v2 = ConfluentRegistryAvroSerializationSchema.forGeneric(subject, ORDER_SCHEMA, registry);
    await Promise.all([v1.open(), v2.open()]);
    const batch = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? v1.serialize(order) : v2.serialize({ ...order, channel: 'app' })));
    // Two deserializers in one container share the registry's client.
    const first = ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, proxied);
    const second = ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA_V1, proxied);
    for (let round = 0; round < 3; round++) {
      expect(await readBatch(first, batch)).toHaveLength(200);
      expect(await readBatch(second, batch)).toHaveLength(200);
    }
    expect(lookups).toBe(2);
  });

  it('sends credentials a provider gives, asking it once, for lookups and registrations alike', async () => {
    authorizations.clear();
    let asked = 0;
    const registry = { url: proxied, credentials: () => Promise.resolve({ username: 'api-key', password: `secret-${++asked}` }) };
    const serializer = ConfluentRegistryAvroSerializationSchema.forGeneric(SubjectNameStrategy.topicName(uniqueName('auth')), ORDER_SCHEMA, registry);
    await serializer.open();
    const value = serializer.serialize({ ...order, channel: 'web' });
    const reader = ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER_SCHEMA, registry);
    await reader.prepare([Buffer.concat([value.subarray(0, 1), Buffer.from([0x7f, 0, 0, 3]), value.subarray(5)])]);
    expect(asked).toBe(1);
    expect([...authorizations]).toEqual([`Basic ${Buffer.from('api-key:secret-1').toString('base64')}`]);
  });
});
