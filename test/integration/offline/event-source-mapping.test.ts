// The offline MSK event source mapping hands the function what Lambda does: the recorded
// sample event's records, produced into a topic and polled back, arrive in the same shape
// (base64 key and value, no key when there is none, headers as signed bytes, in order); a
// failing batch is retried whole, and the group offset moves only after success.
import { readFileSync } from 'node:fs';
import type { MSKEvent, MSKRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createRecordWriter, KafkaAdmin } from '../../../lib/kafka/index.js';
import { EventSourceMapping } from '../../../lib/offline/event-source-mapping.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';

const recorded = JSON.parse(readFileSync(new URL('../../fixtures/lambda-events/msk.json', import.meta.url), 'utf8')) as MSKEvent;
const sample = recorded.records['orders-0'] ?? [];

describe('the offline MSK event source mapping', () => {
  it('delivers records in the shape Lambda does and retries a failed batch whole', async () => {
    const topic = uniqueName('esm');
    const admin = new KafkaAdmin({ brokers: testBrokers() });
    // The recorded event's timestamps are a year old: a topic with time retention would delete them.
    await admin.ensureTopics([{ topic, partitions: 1, configs: { 'retention.ms': '-1' } }]);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      sample.map((r) => ({
        topic,
        partition: 0,
        key: 'key' in r ? Buffer.from(r.key, 'base64') : null,
        value: Buffer.from(r.value, 'base64'),
        timestamp: r.timestamp,
        headers: r.headers.flatMap((h) => Object.entries(h).map(([key, bytes]) => ({ key, value: Buffer.from(Int8Array.from(bytes).buffer) }))),
      })),
    );
    await writer.flush();
    await writer.close();

    const events: MSKEvent[] = [];
    const groupId = `${topic}-group`;
    let offsetsDuringFailures: number | undefined;
    const mapping = new EventSourceMapping({
      kafka: { brokers: testBrokers() },
      topic,
      partitions: [0],
      groupId,
      batchSize: 10,
      batchWindowMs: 300,
      eventSourceArn: recorded.eventSourceArn,
      handler: async (event) => {
        events.push(event);
        if (events.length < 3) {
          offsetsDuringFailures = (await admin.groupOffsets(groupId, topic)).get(0);
          throw new Error('the function failed');
        }
        return 'ok';
      },
    });
    await mapping.start();
    await expect.poll(() => events.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(async () => (await admin.groupOffsets(groupId, topic)).get(0), { timeout: 10_000 }).toBe(sample.length);
    await mapping.stop();

    expect(offsetsDuringFailures).toBe(-1);
    // The same batch, whole, each time.
    expect(events[1]).toEqual(events[0]);
    expect(events[2]).toEqual(events[0]);
    const [event] = events;
    expect(Object.keys(event ?? {}).sort()).toEqual(Object.keys(recorded).sort());
    expect(event).toMatchObject({ eventSource: 'aws:kafka', eventSourceArn: recorded.eventSourceArn, bootstrapServers: testBrokers().join(',') });
    const delivered = event?.records[`${topic}-0`] ?? [];
    // Producing through kafkajs groups a record's headers by key (its headers are an object), so
    // the order between different keys is compared as produced: sorted by key, stable.
    const byKey = (headers: MSKRecord['headers']) => [...headers].sort((a, b) => (Object.keys(a)[0] ?? '').localeCompare(Object.keys(b)[0] ?? ''));
    const comparable = (r: MSKRecord) => ({ ...r, topic: 'orders', offset: 0, timestamp: 0, headers: byKey(r.headers) });
    expect(delivered.map(comparable)).toEqual(sample.map(comparable));
    expect(delivered.map((r) => Object.keys(r))).toEqual(sample.map((r) => Object.keys(r)));
    await admin.close();
  }, 60_000);
});
