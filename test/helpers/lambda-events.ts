// Kafka records as Lambda's Kafka triggers deliver them, for handler tests.
import type { MSKEvent } from 'aws-lambda';
import type { KafkaRecord } from '../../lib/kafka/index.js';

/** Records keyed "topic-partition", keys and values base64, headers as byte arrays. */
export function lambdaRecords(records: readonly KafkaRecord[]): MSKEvent['records'] {
  const grouped: MSKEvent['records'] = {};
  for (const r of records) {
    (grouped[`${r.topic}-${r.partition}`] ??= []).push({
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: r.timestamp,
      timestampType: r.timestampType,
      key: r.key?.toString('base64') ?? '',
      value: r.value?.toString('base64') ?? '',
      headers: r.headers.map((h) => ({ [h.key]: [...(h.value ?? Buffer.alloc(0))] })),
    });
  }
  return grouped;
}
