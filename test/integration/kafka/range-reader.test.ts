// Ranged read_committed reads against the real broker, checked against an independent
// read_uncommitted consumer that shows where every record landed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CommittedRangeReader,
  createRecordWriter,
  KafkaAdmin,
  KafkaCommitter,
  RangeReadError,
  TransactionalWriter,
} from '../../../lib/kafka/index.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';

let admin: KafkaAdmin;
let committer: KafkaCommitter;
let reader: CommittedRangeReader;

beforeAll(() => {
  admin = new KafkaAdmin({ brokers: testBrokers() });
  committer = new KafkaCommitter({ brokers: testBrokers() });
  reader = new CommittedRangeReader({ brokers: testBrokers(), waitTimeoutMs: 1_500 });
});

afterAll(async () => {
  await reader.close();
  await committer.close();
  await admin.close();
});

async function openTransaction(topic: string, name: string) {
  const { writer } = await TransactionalWriter.begin({
    brokers: testBrokers(),
    transactionalId: uniqueName(`range-${name}`),
    transactionTimeoutMs: 60_000,
  });
  let next = 0;
  return {
    write: (count: number) =>
      writer.write(Array.from({ length: count }, () => ({ topic, partition: 0, value: `${name}-${next++}` }))),
    finish: async (outcome: 'commit' | 'abort') => {
      const handle = await writer.preCommit();
      await writer.close();
      await (outcome === 'commit' ? committer.commit(handle) : committer.abort(handle));
    },
  };
}

describe('CommittedRangeReader', () => {
  it('returns exactly the committed records of a range, skipping aborted ones and markers', async () => {
    const topic = uniqueName('range');
    await admin.ensureTopics([{ topic, partitions: 1 }]);
    const plain = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    const writePlain = async (from: number, count: number) => {
      await plain.write(Array.from({ length: count }, (_, i) => ({ topic, partition: 0, value: `plain-${from + i}` })));
      await plain.flush();
    };

    // Two transactions interleave in the partition; one commits and one aborts; then a
    // lone aborted one, plain records between them, and a committed one at the end.
    await writePlain(0, 5);
    const kept = await openTransaction(topic, 'kept');
    const dropped = await openTransaction(topic, 'dropped');
    await kept.write(10);
    await dropped.write(10);
    await kept.write(10);
    await dropped.write(10);
    await kept.finish('commit');
    await dropped.finish('abort');
    const lone = await openTransaction(topic, 'lone');
    await lone.write(7);
    await lone.finish('abort');
    await writePlain(5, 5);
    const last = await openTransaction(topic, 'last');
    await last.write(8);
    await last.finish('commit');

    const everything = await consumeAll(topic, { expected: 65, readUncommitted: true });
    expect(everything).toHaveLength(65);
    const committed = everything.filter((m) => !/^(dropped|lone)-/.test(m.value ?? ''));
    const end = Number((await admin.describeTopics([topic]))[0]?.partitions[0]?.stable);
    expect(end).toBeGreaterThan(everything.length);

    const expectRange = async (from: number, to: number) => {
      const records = await reader.read({ topic, partition: 0, from, to });
      const expected = committed.filter((m) => m.offset >= from && m.offset < to);
      expect(records.map((r) => [r.offset, r.value?.toString()])).toEqual(expected.map((m) => [m.offset, m.value]));
    };
    await expectRange(0, end);
    const inside = everything.filter((m) => m.value?.startsWith('dropped-'));
    await expectRange(inside[0]?.offset ?? 0, (inside.at(-1)?.offset ?? 0) + 1);
    await expectRange(3, 27);
    await expectRange(end - 3, end);
    expect(await reader.read({ topic, partition: 0, from: 12, to: 12 })).toEqual([]);
    await plain.close();
  });

  it('returns keys, headers (repeated keys too) and timestamps as they were written', async () => {
    const topic = uniqueName('range-fields');
    // These timestamps are years old: a topic with time retention would delete them.
    await admin.ensureTopics([{ topic, partitions: 1, configs: { 'retention.ms': '-1' } }]);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write([
      {
        topic,
        key: 'k',
        value: Buffer.from([0, 1, 2]),
        timestamp: 1_700_000_000_123,
        headers: [
          { key: 'h', value: 'one' },
          { key: 'h', value: 'two' },
          { key: 'bin', value: Buffer.from([255]) },
        ],
      },
      { topic, key: null, value: null, timestamp: 1_700_000_000_456 },
    ]);
    await writer.flush();
    await writer.close();

    const [first, second] = await reader.read({ topic, partition: 0, from: 0, to: 2 });
    expect(first).toMatchObject({ topic, partition: 0, offset: 0, timestamp: 1_700_000_000_123 });
    expect(first?.timestampType).toBe('CREATE_TIME');
    expect(first?.key?.toString()).toBe('k');
    expect(first?.value).toEqual(Buffer.from([0, 1, 2]));
    expect(first?.headers.map((h) => [h.key, h.value?.toString('hex')])).toEqual([
      ['h', Buffer.from('one').toString('hex')],
      ['h', Buffer.from('two').toString('hex')],
      ['bin', 'ff'],
    ]);
    expect(second).toMatchObject({ offset: 1, key: null, value: null, timestamp: 1_700_000_000_456 });
  });

  it('waits for an open transaction, and fails naming the partition and offset when it stays open', async () => {
    const topic = uniqueName('range-open');
    await admin.ensureTopics([{ topic, partitions: 1 }]);
    const open = await openTransaction(topic, 'open');
    await open.write(3);

    const error = await reader.read({ topic, partition: 0, from: 0, to: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeReadError);
    expect((error as Error).message).toMatch(new RegExp(`${topic}-0 offsets \\[0, 3\\) stopped at 0: an open transaction`));

    const pending = reader.read({ topic, partition: 0, from: 0, to: 3 });
    await open.finish('commit');
    expect((await pending).map((r) => r.value?.toString())).toEqual(['open-0', 'open-1', 'open-2']);
  });

  it('polls a producer batch of thousands a hundred at a time: each record once, in order, past markers; from anywhere again', async () => {
    const topic = uniqueName('range-polls');
    await admin.ensureTopics([{ topic, partitions: 1 }]);
    const plain = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await plain.write(Array.from({ length: 2_500 }, (_, i) => ({ topic, partition: 0, value: `plain-${i}` })));
    await plain.flush();
    await plain.close();
    const committedOne = await openTransaction(topic, 'committed');
    await committedOne.write(3);
    await committedOne.finish('commit');
    const abortedOne = await openTransaction(topic, 'aborted');
    await abortedOne.write(2);
    await abortedOne.finish('abort');

    // The aborted transaction's marker is the log's last offset: polling ends past it.
    const end = 2_500 + 3 + 1 + 2 + 1;
    const values: string[] = [];
    let next = 0;
    for (let polls = 0; next < end && polls < 100; polls++) {
      const polled = await reader.readAvailable(topic, 0, next, 100);
      expect(polled.records.length).toBeLessThanOrEqual(100);
      values.push(...polled.records.map((r) => r.value?.toString() ?? ''));
      next = polled.next;
    }
    expect(next).toBe(end);
    expect(values).toEqual([...Array.from({ length: 2_500 }, (_, i) => `plain-${i}`), 'committed-0', 'committed-1', 'committed-2']);
    // A poll from an earlier offset, or one read ahead already, returns from exactly there.
    expect((await reader.readAvailable(topic, 0, 1_234, 2)).records.map((r) => r.offset)).toEqual([1_234, 1_235]);
    expect((await reader.readAvailable(topic, 0, 1_000, 1)).records.map((r) => r.offset)).toEqual([1_000]);
    expect((await reader.readAvailable(topic, 0, 1_236, 1)).records.map((r) => r.offset)).toEqual([1_236]);
  });

  it('refuses a range past the end of the log', async () => {
    const topic = uniqueName('range-end');
    await admin.ensureTopics([{ topic, partitions: 1 }]);
    await expect(reader.read({ topic, partition: 0, from: 0, to: 5 })).rejects.toThrow(/the log ends at 0/);
  });
});
