import { describe, expect, it } from 'vitest';
import { decodeKafkaEvent } from '../../../lib/aws/kafka-event.js';
import type { KafkaRecord } from '../../../lib/kafka/records.js';
import { mskEvent } from '../../../lib/offline/msk-event.js';

const record = (offset: number, key: string | null, value: string | null): KafkaRecord => ({
  topic: 'users',
  partition: 0,
  offset,
  timestamp: 1_000,
  timestampType: 'CREATE_TIME',
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  headers: [],
});

describe("offline mode's MSK events", () => {
  it('keep a tombstone null and an empty value empty, as Lambda does, through the real decoder', () => {
    const event = mskEvent([record(0, 'u1', null), record(1, 'u2', ''), record(2, null, 'x')], 'arn:aws:kafka:eu-west-1:1:cluster/c/1', ['b:9092']);
    const [tombstone, empty, unkeyed] = event.records['users-0'] ?? [];
    expect(tombstone && 'value' in tombstone).toBe(false);
    expect(unkeyed && 'key' in unkeyed).toBe(false);
    const decoded = decodeKafkaEvent(event).partitions[0]?.records ?? [];
    expect(decoded.map((r) => r.value)).toEqual([null, Buffer.alloc(0), Buffer.from('x')]);
    expect(empty?.value).toBe('');
  });
});
