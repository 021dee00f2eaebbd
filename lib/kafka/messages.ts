import type { FetchedMessage } from 'kafkajs/src/cluster/index.js';
import type { KafkaRecord, OutputRecord, RecordHeader } from './records.js';

function toBuffer(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** kafkajs keeps headers in an object; a key that repeats becomes an array, in order. */
type HeaderObject = Record<string, Buffer | Buffer[]>;

function headerObject(headers: OutputRecord['headers']): HeaderObject | undefined {
  if (!headers || headers.length === 0) return undefined;
  const result: HeaderObject = {};
  for (const { key, value } of headers) {
    const existing = result[key];
    const buffer = toBuffer(value);
    result[key] = existing === undefined ? buffer : [...(Array.isArray(existing) ? existing : [existing]), buffer];
  }
  return result;
}

/** An {@link OutputRecord} in the shape kafkajs produces. */
export interface KafkaMessage {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: HeaderObject;
  readonly partition?: number;
  readonly timestamp?: string;
}

export function toKafkaMessage(record: OutputRecord): KafkaMessage {
  const headers = headerObject(record.headers);
  return {
    key: record.key === undefined || record.key === null ? null : toBuffer(record.key),
    value: record.value === null ? null : toBuffer(record.value),
    ...(headers ? { headers } : {}),
    ...(record.partition === undefined ? {} : { partition: record.partition }),
    ...(record.timestamp === undefined ? {} : { timestamp: String(record.timestamp) }),
  };
}

/** Rough wire size of a record, for keeping requests under the broker's message size limit. */
export function estimatedSize(message: KafkaMessage): number {
  let size = 32 + (message.key?.length ?? 0) + (message.value?.length ?? 0);
  for (const [key, value] of Object.entries(message.headers ?? {})) {
    for (const part of Array.isArray(value) ? value : [value]) size += 8 + key.length + part.length;
  }
  return size;
}

const LOG_APPEND_TIME = 1;

/** A fetched kafkajs message as a {@link KafkaRecord}. */
export function fromFetchedMessage(topic: string, partition: number, message: FetchedMessage): KafkaRecord {
  const headers: RecordHeader[] = [];
  for (const [key, value] of Object.entries(message.headers)) {
    for (const part of Array.isArray(value) ? value : [value]) headers.push({ key, value: part ?? null });
  }
  return {
    topic,
    partition,
    offset: Number(message.offset),
    timestamp: Number(message.timestamp),
    timestampType: message.batchContext.timestampType === LOG_APPEND_TIME ? 'LOG_APPEND_TIME' : 'CREATE_TIME',
    key: message.key,
    value: message.value,
    headers,
  };
}
