import type { MSKEvent, SelfManagedKafkaEvent } from 'aws-lambda';
import { isSchemaVersionId, writeGlueWireFormat } from '../formats/glue-wire-format.js';
import { writeWireFormat } from '../formats/wire-format.js';
import type { KafkaRecord, RecordHeader, TimestampType } from '../kafka/records.js';

/** Lambda's Kafka event sources: Amazon MSK, and self-managed Apache Kafka (current and older name). */
export type KafkaEventSource = 'aws:kafka' | 'SelfManagedKafka' | 'aws:SelfManagedKafka';

/** The event Lambda's MSK or self-managed Kafka trigger passes to a handler. */
export type LambdaKafkaEvent = MSKEvent | SelfManagedKafkaEvent;

/** A Lambda Kafka event, decoded: one entry per partition, records in offset order. */
export interface DecodedKafkaEvent {
  readonly eventSource: KafkaEventSource;
  /** The MSK cluster's ARN; self-managed Kafka events have none. */
  readonly eventSourceArn: string | undefined;
  readonly bootstrapServers: readonly string[];
  readonly partitions: readonly DecodedPartition[];
}

export interface DecodedPartition {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly KafkaRecord[];
}

/** The event is not a Lambda Kafka event Sluice can read; the message names the field. */
export class MalformedKafkaEventError extends Error {
  override readonly name = 'MalformedKafkaEventError';
}

const EVENT_SOURCES = new Set<string>(['aws:kafka', 'SelfManagedKafka', 'aws:SelfManagedKafka']);
const TIMESTAMP_TYPES = new Set<string>(['CREATE_TIME', 'LOG_APPEND_TIME']);

function fail(where: string, problem: string): never {
  throw new MalformedKafkaEventError(`Malformed Kafka event: ${where} ${problem}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Where a field of a record sits in the event, as text: built only for a message, since a
 * batch of records would otherwise build several texts per record that nothing reads.
 */
type Place = (field: string) => string;

function wholeNumber(value: unknown, place: Place, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    fail(place(field), `must be a whole number ≥ 0, not ${JSON.stringify(value)}`);
  }
  return value;
}

function base64(value: unknown, place: Place, field: string): Buffer | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(place(field), 'is not a base64 string');
  // Lambda sends padded base64, four characters for every three bytes. The decoder skips what is
  // not base64, so a value with such a character decodes to fewer bytes than its length says.
  // Counting is linear and allocates nothing, for values of any size (a regular expression over
  // a 4 MB value overflowed the stack; encoding each value back cost more than decoding it).
  if (value.length % 4 !== 0) fail(place(field), 'is not a base64 string');
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== (value.length / 4) * 3 - padding) fail(place(field), 'is not a base64 string');
  return bytes;
}

function headerBytes(value: unknown, place: Place, field: string): Buffer {
  if (!Array.isArray(value) || !value.every((b) => Number.isInteger(b) && (b as number) >= -128 && (b as number) <= 255)) {
    fail(place(field), 'must be an array of bytes');
  }
  // Lambda writes header bytes as Java's signed bytes; & 0xff makes them unsigned.
  return Buffer.from((value as number[]).map((b) => b & 0xff));
}

function decodeHeaders(value: unknown, place: Place, field: string): RecordHeader[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(place(field), 'must be an array of {name: bytes} objects');
  return value.flatMap((entry: unknown, index) => {
    if (!isObject(entry)) fail(place(`${field}[${index}]`), 'must be an object {name: bytes}');
    return Object.entries(entry).map(([key, bytes]) => ({ key, value: headerBytes(bytes, place, `${field}[${index}].${key}`) }));
  });
}

/**
 * A key or value as Kafka holds it. With a schema registry configured on the event-source
 * mapping (provisioned mode, EventRecordFormat SOURCE), Lambda strips the wire format's header
 * and names the schema beside the bytes: a Confluent schema id, or an AWS Glue schema version
 * id (a UUID). Sluice puts the header back, so that a record reads the same whether the mapping
 * delivered it or Sluice reread it from Kafka (a replay, a gap), and a dead letter keeps the
 * record's bytes. A Glue header goes back uncompressed: the mapping hands over the payload it
 * validated, which is the inflated one.
 */
function reframed(bytes: Buffer | null, metadata: unknown, place: Place, field: string): Buffer | null {
  if (bytes === null || metadata === undefined || metadata === null) return bytes;
  const where = place(field);
  if (!isObject(metadata)) fail(where, 'must be an object {dataFormat, schemaId}');
  const { dataFormat, schemaId } = metadata;
  // Without a schema id the mapping validated nothing: the bytes are the record's own.
  if (schemaId === undefined || schemaId === null) return bytes;
  const glue = typeof schemaId === 'string' && isSchemaVersionId(schemaId);
  if (!glue && (typeof schemaId !== 'string' || !/^\d{1,10}$/.test(schemaId) || Number(schemaId) > 0x7fffffff)) {
    fail(
      `${where}.schemaId`,
      `is ${JSON.stringify(schemaId)}, neither a Confluent schema id (a number) nor an AWS Glue schema version id (a UUID): ` +
        "check the mapping's schema registry configuration",
    );
  }
  if (dataFormat !== 'AVRO' && dataFormat !== 'JSON') {
    fail(
      `${where}.dataFormat`,
      `is ${JSON.stringify(dataFormat)}: Sluice restores the wire format of Avro and JSON Schema records the mapping validated; ` +
        "for Protobuf, remove the mapping's schema registry configuration and read with ConfluentRegistryProtobufDeserializationSchema",
    );
  }
  return glue ? writeGlueWireFormat(schemaId, bytes) : writeWireFormat(Number(schemaId), bytes);
}

function decodeRecord(raw: unknown, place: Place, topic: string, partition: number): KafkaRecord {
  if (!isObject(raw)) fail(place(''), 'must be an object');
  if (raw.topic !== topic) fail(place('.topic'), `is ${JSON.stringify(raw.topic)} but the record is listed under "${topic}-${partition}"`);
  if (raw.partition !== partition) {
    fail(place('.partition'), `is ${JSON.stringify(raw.partition)} but the record is listed under "${topic}-${partition}"`);
  }
  const timestampType = raw.timestampType;
  if (typeof timestampType !== 'string' || !TIMESTAMP_TYPES.has(timestampType)) {
    fail(place('.timestampType'), `must be CREATE_TIME or LOG_APPEND_TIME, not ${JSON.stringify(timestampType)}`);
  }
  return {
    topic,
    partition,
    offset: wholeNumber(raw.offset, place, '.offset'),
    timestamp: wholeNumber(raw.timestamp, place, '.timestamp'),
    timestampType: timestampType as TimestampType,
    key: reframed(base64(raw.key, place, '.key'), raw.keySchemaMetadata, place, '.keySchemaMetadata'),
    value: reframed(base64(raw.value, place, '.value'), raw.valueSchemaMetadata, place, '.valueSchemaMetadata'),
    headers: decodeHeaders(raw.headers, place, '.headers'),
  };
}

/** Splits Lambda's `"topic-partition"` key; topic names may themselves contain dashes. */
function splitPartitionKey(key: string): { topic: string; partition: number } {
  const match = /^(.+)-(\d+)$/.exec(key);
  if (!match?.[1] || match[2] === undefined) fail(`records["${key}"]`, 'has a key that is not "topic-partition"');
  return { topic: match[1], partition: Number(match[2]) };
}

/**
 * Decodes the event that Lambda's MSK or self-managed Kafka trigger sends: base64 keys and
 * values become Buffers (null where Lambda omits them), header byte arrays become Buffers,
 * and every record is checked against the partition it is listed under.
 */
export function decodeKafkaEvent(lambdaEvent: LambdaKafkaEvent): DecodedKafkaEvent {
  // What arrives at run time is checked field by field, whatever its declared type says.
  const event: unknown = lambdaEvent;
  if (!isObject(event)) fail('the event', 'must be an object');
  const { eventSource } = event;
  if (typeof eventSource !== 'string' || !EVENT_SOURCES.has(eventSource)) {
    fail('eventSource', `must be "aws:kafka" or "SelfManagedKafka", not ${JSON.stringify(eventSource)}`);
  }
  const eventSourceArn = event.eventSourceArn;
  if (eventSource === 'aws:kafka' && typeof eventSourceArn !== 'string') {
    fail('eventSourceArn', 'is missing: an MSK event names its cluster');
  }
  const bootstrapServers =
    typeof event.bootstrapServers === 'string'
      ? event.bootstrapServers.split(',').filter((server) => server !== '')
      : fail('bootstrapServers', 'must be a comma-separated string');
  if (!isObject(event.records)) fail('records', 'must be an object keyed "topic-partition"');

  const partitions = Object.entries(event.records).map(([key, list]) => {
    const { topic, partition } = splitPartitionKey(key);
    if (!Array.isArray(list)) fail(`records["${key}"]`, 'must be an array of records');
    const records = list.map((raw: unknown, index) => decodeRecord(raw, (field) => `records["${key}"][${index}]${field}`, topic, partition));
    records.forEach((record, index) => {
      const previous = records[index - 1];
      if (previous && record.offset <= previous.offset) {
        fail(`records["${key}"][${index}].offset`, `is ${record.offset}, not after the previous record's ${previous.offset}`);
      }
    });
    return { topic, partition, records };
  });
  return {
    eventSource: eventSource as KafkaEventSource,
    eventSourceArn: typeof eventSourceArn === 'string' ? eventSourceArn : undefined,
    bootstrapServers,
    partitions,
  };
}
