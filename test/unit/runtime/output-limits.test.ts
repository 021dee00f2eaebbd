import { describe, expect, it } from 'vitest';
import { writeLimitsOf, type TopicWriteLimits } from '../../../lib/kafka/admin.js';
import type { TopicAdmin } from '../../../lib/kafka/clients.js';
import { bytesOverLimit, OutputLimits, RecordTimestampError, RETENTION_MARGIN_MS } from '../../../lib/runtime/output-limits.js';

const NOW = Date.UTC(2026, 11, 1, 12);
const DAY = 86_400_000;

/** A topic admin that answers only timestamp policies, from configurations that a test may change, and counts the reads. */
function adminWith(configs: Record<string, Record<string, string>>) {
  const reads: string[][] = [];
  const admin = {
    writeLimits: (topics: readonly string[]): Promise<TopicWriteLimits[]> => {
      reads.push([...topics]);
      return Promise.resolve(topics.map((topic) => writeLimitsOf(topic, configs[topic] ?? {})));
    },
  } as unknown as TopicAdmin;
  return { admin, reads, configs };
}

const record = (topic: string, timestamp: number | undefined) => ({ topic, key: 'books', value: '{}', ...(timestamp === undefined ? {} : { timestamp }) });

describe('OutputLimits', () => {
  it('refuses a record that retention would delete within its margin, and names the topic, the time, the retention and the fixes', async () => {
    const { admin } = adminWith({ out: { 'retention.ms': String(7 * DAY) } });
    const guard = new OutputLimits(admin, () => NOW);
    await guard.checkTimestamps([record('out', NOW - 7 * DAY + RETENTION_MARGIN_MS + 1)], 'stage-1 orders/0');
    const refused = guard.checkTimestamps([record('out', NOW - 7 * DAY + RETENTION_MARGIN_MS - 1)], "stage-1's batch of orders/0 from offset 42");
    await expect(refused).rejects.toBeInstanceOf(RecordTimestampError);
    await expect(refused).rejects.toThrow(
      'An output record for out (key "books") has the timestamp 2026-11-24T12:09:59.999Z, and the topic deletes records older ' +
        'than its retention.ms of 7 days (604800000 ms) within minutes, so this output would be lost once committed. Fix it ' +
        "one of these ways: stamp output with the time it is written (KafkaRecordSerializationSchema.builder()...setRecordTimestamp(RecordTimestamp.WRITE_TIME)); " +
        "raise the topic's retention.ms (-1 keeps records whatever their age); or set its message.timestamp.type to LogAppendTime. " +
        "It came from stage-1's batch of orders/0 from offset 42; the batch fails and is retried, so nothing is lost or written.",
    );
  });

  it('refuses what the broker would refuse: CreateTimes beyond message.timestamp.after.max.ms or before.max.ms', async () => {
    const { admin } = adminWith({ out: { 'retention.ms': '-1', 'message.timestamp.after.max.ms': '3600000', 'message.timestamp.before.max.ms': String(30 * DAY) } });
    const guard = new OutputLimits(admin, () => NOW);
    await guard.checkTimestamps([record('out', NOW + 3_600_000), record('out', NOW - 30 * DAY)], 'here');
    await expect(guard.checkTimestamps([record('out', NOW + 3_600_001)], 'here')).rejects.toThrow(/message\.timestamp\.after\.max\.ms \(1 h \(3600000 ms\)\) ahead of its clock/);
    await expect(guard.checkTimestamps([record('out', NOW - 30 * DAY - 1)], 'here')).rejects.toThrow(/message\.timestamp\.before\.max\.ms \(30 days/);
  });

  it('lets through what the topic keeps: compacted topics, LogAppendTime, retention -1, records without a timestamp', async () => {
    const { admin } = adminWith({
      compacted: { 'cleanup.policy': 'compact', 'retention.ms': String(DAY) },
      appended: { 'message.timestamp.type': 'LogAppendTime', 'retention.ms': String(DAY) },
      forever: { 'retention.ms': '-1' },
      short: { 'retention.ms': String(DAY) },
    });
    const guard = new OutputLimits(admin, () => NOW);
    const old = NOW - 365 * DAY;
    await guard.checkTimestamps([record('compacted', old), record('appended', old), record('forever', old), record('short', undefined)], 'here');
  });

  it('reads a topic once, and again before it refuses a record, so that a topic fixed meanwhile lets the retry through', async () => {
    const { admin, reads, configs } = adminWith({ out: { 'retention.ms': String(DAY) } });
    const guard = new OutputLimits(admin, () => NOW);
    await guard.checkTimestamps([record('out', NOW)], 'here');
    await guard.checkTimestamps([record('out', NOW)], 'here');
    expect(reads).toEqual([['out']]);
    await expect(guard.checkTimestamps([record('out', NOW - 2 * DAY)], 'here')).rejects.toThrow(RecordTimestampError);
    configs.out = { 'retention.ms': '-1' };
    await guard.checkTimestamps([record('out', NOW - 2 * DAY)], 'here');
    expect(reads).toEqual([['out'], ['out'], ['out']]);
  });
});

describe('OutputLimits.maxRecordBytes', () => {
  it("is the prepared topic's max.message.bytes, and Kafka's default for a topic it has not read", async () => {
    const { admin, reads } = adminWith({ big: { 'max.message.bytes': '8388608' } });
    const limits = new OutputLimits(admin, () => NOW);
    await limits.prepare(['big', 'plain']);
    await limits.prepare(['big', 'plain']);
    expect(reads).toEqual([['big', 'plain']]);
    expect([limits.maxRecordBytes('big'), limits.maxRecordBytes('plain'), limits.maxRecordBytes('picked-per-element')]).toEqual([8_388_608, 1_048_588, 1_048_588]);
  });
});

describe('bytesOverLimit', () => {
  it('counts UTF-8 bytes where the quick upper bound cannot decide', () => {
    const ascii = { topic: 't', key: null, value: 'a'.repeat(500_000) };
    const wide = { topic: 't', key: null, value: 'é'.repeat(500_000) };
    // Both bounded at 1,500,128 bytes; exactly 500,128 and 1,000,128.
    expect(bytesOverLimit(ascii, 1_000_000)).toBeUndefined();
    expect(bytesOverLimit(wide, 1_000_000)).toBe(1_000_128);
    expect(bytesOverLimit(wide, 1_000_128)).toBeUndefined();
    expect(bytesOverLimit({ topic: 't', value: 'x' }, 1_048_588)).toBeUndefined();
  });
});
