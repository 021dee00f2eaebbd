import type { MSKEvent, MSKRecord, SelfManagedKafkaEvent } from 'aws-lambda';
import type { KafkaRecord } from '../kafka/records.js';

/**
 * One record as Lambda's Kafka event source mapping hands it over: key and value base64 (no
 * `key` at all for a record without one, no `value` for a tombstone), header values as arrays
 * of signed bytes, as the Java poller writes them.
 */
export function toLambdaRecord(record: KafkaRecord): MSKRecord {
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    timestampType: record.timestampType,
    ...(record.key === null ? {} : { key: record.key.toString('base64') }),
    ...(record.value === null ? {} : { value: record.value.toString('base64') }),
    headers: record.headers.map((header) => ({ [header.key]: [...new Int8Array(header.value ?? Buffer.alloc(0))] })),
  } as MSKRecord;
}

/** Records grouped as an event's `records`: by "topic-partition", in offset order. */
export function lambdaRecords(records: readonly KafkaRecord[]): MSKEvent['records'] {
  const grouped: MSKEvent['records'] = {};
  for (const record of records) (grouped[`${record.topic}-${record.partition}`] ??= []).push(toLambdaRecord(record));
  return grouped;
}

/** An Amazon MSK event, as Lambda delivers it to the function. */
export function mskEvent(records: readonly KafkaRecord[], eventSourceArn: string, bootstrapServers: readonly string[]): MSKEvent {
  return { eventSource: 'aws:kafka', eventSourceArn, bootstrapServers: bootstrapServers.join(','), records: lambdaRecords(records) };
}

/** A self-managed Apache Kafka event, as Lambda delivers it: no cluster ARN, and under either of the source's names. */
export function selfManagedKafkaEvent(
  records: readonly KafkaRecord[],
  bootstrapServers: readonly string[],
  eventSource: 'SelfManagedKafka' | 'aws:SelfManagedKafka' = 'SelfManagedKafka',
): SelfManagedKafkaEvent {
  return { eventSource, bootstrapServers: bootstrapServers.join(','), records: lambdaRecords(records) } as SelfManagedKafkaEvent;
}
