import { readFileSync } from 'node:fs';
import type { MSKEvent, SelfManagedKafkaEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { decodeKafkaEvent, MalformedKafkaEventError, type LambdaKafkaEvent } from '../../../lib/aws/kafka-event.js';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../fixtures/lambda-events/${name}`, import.meta.url), 'utf8'));
}

/** The MSK fixture as plain JSON that a test may break on purpose. */
interface RawEvent {
  eventSource?: unknown;
  eventSourceArn?: unknown;
  records: Record<string, Record<string, unknown>[]>;
}

/** The fixture with one field changed, as a deliberately malformed event. */
function broken(change: (event: RawEvent, orders: Record<string, unknown>[]) => void): LambdaKafkaEvent {
  const event = fixture('msk.json') as RawEvent;
  change(event, event.records['orders-0'] ?? []);
  return event as unknown as LambdaKafkaEvent;
}

function at(records: Record<string, unknown>[], index: number): Record<string, unknown> {
  const record = records[index];
  if (!record) throw new Error(`the fixture has no record ${index}`);
  return record;
}

describe('decodeKafkaEvent', () => {
  it('decodes an MSK event: partitions, base64 keys and values, headers in order, timestamps', () => {
    const decoded = decodeKafkaEvent(fixture('msk.json') as MSKEvent);
    expect(decoded.eventSource).toBe('aws:kafka');
    expect(decoded.eventSourceArn).toMatch(/^arn:aws:kafka:eu-west-1:123456789012:cluster\/orders-cluster\//);
    expect(decoded.bootstrapServers).toHaveLength(2);
    expect(decoded.partitions.map(({ topic, partition }) => `${topic}/${partition}`)).toEqual([
      'orders/0',
      'order-events-v2/11',
    ]);

    const [first, second] = decoded.partitions[0]?.records ?? [];
    expect(first).toMatchObject({ topic: 'orders', partition: 0, offset: 41, timestamp: 1764403200123 });
    expect(first?.timestampType).toBe('CREATE_TIME');
    expect(first?.key?.toString()).toBe('books');
    expect(JSON.parse(first?.value?.toString() ?? '')).toEqual({
      orderId: 'o-1',
      category: 'books',
      amount: 12.5,
      timestamp: 1764403200100,
    });
    expect(first?.headers.map((h) => [h.key, h.value?.toString()])).toEqual([
      ['trace-id', 'abc-1'],
      ['source', 'web'],
      ['trace-id', 'abc-2'],
    ]);
    expect(second?.key).toBeNull();
    expect(second?.offset).toBe(42);
  });

  it('keeps an empty key distinct from a null one and reads signed header bytes as bytes', () => {
    const [record] = decodeKafkaEvent(fixture('msk.json') as MSKEvent).partitions[1]?.records ?? [];
    expect(record?.key).toEqual(Buffer.alloc(0));
    expect(record?.timestampType).toBe('LOG_APPEND_TIME');
    expect(record?.value).toEqual(Buffer.from([0x00, 0xff, 0x10, 0x80]));
    expect(record?.headers[0]?.value).toEqual(Buffer.from([0xff, 0x80, 0x00, 0x7f]));
  });

  it('decodes values of any size a record may have (Lambda’s payload allows 6 MB)', () => {
    const large = Buffer.alloc(5_500_000, 'sluice ');
    const event = broken((_, orders) => (at(orders, 0).value = large.toString('base64')));
    expect(decodeKafkaEvent(event).partitions[0]?.records[0]?.value).toEqual(large);
  });

  it('decodes a self-managed Kafka event, which has no event source ARN', () => {
    const decoded = decodeKafkaEvent(fixture('self-managed.json') as SelfManagedKafkaEvent);
    expect(decoded.eventSource).toBe('SelfManagedKafka');
    expect(decoded.eventSourceArn).toBeUndefined();
    expect(decoded.partitions[0]?.records[0]).toMatchObject({ topic: 'orders', partition: 2, offset: 1000 });
    expect(decoded.partitions[0]?.records[0]?.key?.toString()).toBe('garden');
  });

  it('accepts the older "aws:SelfManagedKafka" event source name', () => {
    const event = { ...(fixture('self-managed.json') as object), eventSource: 'aws:SelfManagedKafka' };
    expect(decodeKafkaEvent(event as unknown as LambdaKafkaEvent).eventSource).toBe('aws:SelfManagedKafka');
  });

  it("restores the wire format's header that a mapping with a schema registry (EventRecordFormat SOURCE) strips", () => {
    const payload = Buffer.from([0x02, 0x61, 0x14]);
    const decoded = decodeKafkaEvent(
      broken((_, orders) => {
        at(orders, 0).value = payload.toString('base64');
        at(orders, 0).valueSchemaMetadata = { dataFormat: 'AVRO', schemaId: '1234' };
        at(orders, 0).keySchemaMetadata = { dataFormat: 'JSON', schemaId: '7' };
        at(orders, 1).valueSchemaMetadata = null;
      }),
    );
    const [first, second] = decoded.partitions[0]?.records ?? [];
    expect(first?.value).toEqual(Buffer.concat([Buffer.from([0, 0, 0, 0x04, 0xd2]), payload]));
    expect(first?.key?.subarray(0, 5)).toEqual(Buffer.from([0, 0, 0, 0, 7]));
    // A record the mapping did not validate keeps its bytes.
    expect(second?.value).toEqual(decodeKafkaEvent(broken(() => undefined)).partitions[0]?.records[1]?.value);
  });

  it('restores the AWS Glue wire format of a record the mapping validated against a Glue registry', () => {
    const payload = Buffer.from([0x02, 0x61, 0x14]);
    const versionId = 'a1b2c3d4-0000-4000-8000-123456789abc';
    const decoded = decodeKafkaEvent(
      broken((_, orders) => {
        at(orders, 0).value = payload.toString('base64');
        at(orders, 0).valueSchemaMetadata = { dataFormat: 'AVRO', schemaId: versionId };
      }),
    );
    const value = decoded.partitions[0]?.records[0]?.value;
    expect(value?.subarray(0, 2)).toEqual(Buffer.from([3, 0]));
    expect(value?.subarray(2, 18).toString('hex')).toBe(versionId.replaceAll('-', ''));
    expect(value?.subarray(18)).toEqual(payload);
  });

  const malformed: [string, (event: RawEvent, orders: Record<string, unknown>[]) => unknown, RegExp][] = [
    [
      'a schema id of neither registry',
      (_, orders) => (at(orders, 0).valueSchemaMetadata = { dataFormat: 'AVRO', schemaId: 'orders-value' }),
      /records\["orders-0"\]\[0\]\.valueSchemaMetadata\.schemaId is "orders-value", neither a Confluent schema id \(a number\) nor an AWS Glue schema version id \(a UUID\)/,
    ],
    [
      'a Protobuf record the mapping validated',
      (_, orders) => (at(orders, 0).valueSchemaMetadata = { dataFormat: 'PROTOBUF', schemaId: '3' }),
      /valueSchemaMetadata\.dataFormat is "PROTOBUF": .*ConfluentRegistryProtobufDeserializationSchema/,
    ],
    ['an unknown event source', (e) => (e.eventSource = 'aws:sqs'), /eventSource must be "aws:kafka"/],
    ['an MSK event without its ARN', (e) => delete e.eventSourceArn, /eventSourceArn is missing/],
    ['records that are not an object', (e) => (e.records = [] as unknown as RawEvent['records']), /records must be an object/],
    [
      'a key that is not topic-partition',
      (e, orders) => (e.records = { orders }),
      /records\["orders"\] has a key that is not "topic-partition"/,
    ],
    [
      'a value that is not base64',
      (_, orders) => (at(orders, 1).value = 'not base64!'),
      /records\["orders-0"\]\[1\]\.value is not a base64 string/,
    ],
    [
      'raw JSON as long as base64 could be',
      (_, orders) => (at(orders, 1).value = '{"a":12}'),
      /records\["orders-0"\]\[1\]\.value is not a base64 string/,
    ],
    [
      'base64 with a character outside its alphabet',
      (_, orders) => (at(orders, 0).key = 'b3Jk$XI='),
      /records\["orders-0"\]\[0\]\.key is not a base64 string/,
    ],
    [
      'a record listed under another partition',
      (_, orders) => (at(orders, 0).partition = 3),
      /records\["orders-0"\]\[0\]\.partition is 3 but the record is listed under "orders-0"/,
    ],
    [
      'offsets out of order',
      (_, orders) => (at(orders, 1).offset = 41),
      /records\["orders-0"\]\[1\]\.offset is 41, not after the previous record's 41/,
    ],
    [
      'a negative offset',
      (_, orders) => (at(orders, 0).offset = -1),
      /records\["orders-0"\]\[0\]\.offset must be a whole number/,
    ],
    [
      'an unknown timestamp type',
      (_, orders) => (at(orders, 0).timestampType = 'NO_TIMESTAMP_TYPE'),
      /timestampType must be CREATE_TIME or LOG_APPEND_TIME/,
    ],
    [
      'a header that is not bytes',
      (_, orders) => (at(orders, 0).headers = [{ 'trace-id': 'abc' }]),
      /records\["orders-0"\]\[0\]\.headers\[0\]\.trace-id must be an array of bytes/,
    ],
  ];

  it.each(malformed)('rejects %s, naming the field', (_, change, message) => {
    const attempt = () => decodeKafkaEvent(broken(change));
    expect(attempt).toThrow(MalformedKafkaEventError);
    expect(attempt).toThrow(message);
  });

  it('rejects something that is not an event at all', () => {
    expect(() => decodeKafkaEvent(null as unknown as LambdaKafkaEvent)).toThrow(/the event must be an object/);
  });
});
