// The contract of KafkaClients (lib/kafka/clients.ts): what the runtime relies on a broker for.
// kafka-clients.test.ts runs it against the real broker and against the simulation's twin, so
// the twin is held to the broker's behaviour.
import { describe, expect, it } from 'vitest';
import {
  MissingTopicsError,
  TransactionAlreadyCommittedError,
  TransactionLostError,
  type KafkaClients,
  type OutputRecord,
  type TransactionHandle,
} from '../../../lib/kafka/index.js';
import { logEndAfter } from '../../helpers/kafka.js';

export interface KafkaContractTarget {
  readonly clients: KafkaClients;
  /** A new topic of its own for one test, with topic-level `configs`. */
  createTopic(partitions?: number, configs?: Readonly<Record<string, string>>): Promise<string>;
  /** Writes without a transaction, acks=all. */
  append(records: readonly OutputRecord[]): Promise<void>;
  /** Lets `ms` pass on the broker's clock. */
  pass(ms: number): Promise<void>;
  /** A transactional id no other test uses. */
  transactionalId(): string;
}

const TIMEOUT_MS = 60_000;

export function kafkaClientsContract(name: string, target: () => KafkaContractTarget) {
  const begin = (transactionalId: string, transactionTimeoutMs = TIMEOUT_MS) =>
    target().clients.beginTransaction({ transactionalId, transactionTimeoutMs });
  const values = (records: readonly { value: Buffer | null }[]) => records.map((r) => r.value?.toString());
  const written = (topic: string, ...texts: string[]): OutputRecord[] => texts.map((value) => ({ topic, partition: 0, key: value, value }));

  async function preCommitted(topic: string, transactionalId: string, ...texts: string[]): Promise<TransactionHandle> {
    const writer = await begin(transactionalId);
    await writer.write(written(topic, ...texts));
    const handle = await writer.preCommit();
    await writer.close();
    return handle;
  }

  /** Waits for the broker to settle what `pass` set going (a real broker aborts timed-out transactions in the background). */
  async function stateOf(transactionalId: string, expected: string): Promise<void> {
    for (let attempt = 0; attempt < 40; attempt++) {
      if ((await target().clients.committer.describe(transactionalId))?.state === expected) return;
      await target().pass(250);
    }
    expect((await target().clients.committer.describe(transactionalId))?.state).toBe(expected);
  }

  /**
   * A poll once the commit's markers are in: a broker answers EndTxn before it has written them,
   * so the last stable offset moves a moment after the commit returns.
   */
  async function pollAfterCommit(topic: string, from: number, maxRecords: number, expected: number) {
    for (let attempt = 0; ; attempt++) {
      const polled = await target().clients.reader.readAvailable(topic, 0, from, maxRecords);
      if (polled.records.length >= expected || attempt >= 40) return polled;
      await target().pass(250);
    }
  }

  describe(`KafkaClients contract: ${name}`, () => {
    it('reports the retention, timestamp and size settings a topic was created with', async () => {
      const configs = {
        'retention.ms': '86400000',
        'message.timestamp.type': 'LogAppendTime',
        'message.timestamp.before.max.ms': '2592000000',
        'message.timestamp.after.max.ms': '3600000',
        'max.message.bytes': '2000000',
      };
      const kept = await target().createTopic(1, configs);
      const compacted = await target().createTopic(1, { ...configs, 'cleanup.policy': 'compact', 'message.timestamp.type': 'CreateTime' });
      expect(await target().clients.admin.writeLimits([kept, compacted])).toEqual([
        { topic: kept, retentionMs: 86_400_000, timestampType: 'LOG_APPEND_TIME', maxPastMs: 2_592_000_000, maxFutureMs: 3_600_000, maxMessageBytes: 2_000_000 },
        { topic: compacted, retentionMs: -1, timestampType: 'CREATE_TIME', maxPastMs: 2_592_000_000, maxFutureMs: 3_600_000, maxMessageBytes: 2_000_000 },
      ]);
    });

    it('names the topics that do not exist, in a description or in the settings of topics written to', async () => {
      const kept = await target().createTopic(1);
      const missing = `${kept}-misspelled`;
      const named = (error: unknown) => error instanceof MissingTopicsError && error.topics.join() === missing && error.message.startsWith(`Topic ${missing} does not exist`);
      expect(named(await target().clients.admin.writeLimits([kept, missing]).catch((error: unknown) => error))).toBe(true);
      expect(named(await target().clients.admin.describeTopics([kept, missing]).catch((error: unknown) => error))).toBe(true);
      expect(await target().clients.admin.listTopics()).not.toContain(missing);
    });

    it('keeps a pre-committed transaction invisible until a commit by handle, whose marker takes an offset', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const handle = await preCommitted(topic, target().transactionalId(), 'a', 'b', 'c');
      expect(await clients.reader.readAvailable(topic, 0, 0, 100)).toEqual({ records: [], next: 0 });
      expect((await clients.committer.describe(handle.transactionalId))?.state).toBe('Ongoing');

      expect(await clients.committer.commit(handle)).toBe('committed');
      const { records, next } = await pollAfterCommit(topic, 0, 100, 3);
      expect(values(records)).toEqual(['a', 'b', 'c']);
      expect(records.map((r) => r.offset)).toEqual([0, 1, 2]);
      expect(next).toBe(4);
      const [description] = await clients.admin.describeTopics([topic]);
      expect(description?.partitions[0]?.stable).toBe('4');
    });

    it('ends a description at the last stable offset and the log past open transactions, until the commit', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      await target().append(written(topic, 'before'));
      const handle = await preCommitted(topic, target().transactionalId(), 'open-1', 'open-2');
      await target().append(written(topic, 'after'));
      const stable = async () => (await clients.admin.describeTopics([topic]))[0]?.partitions[0]?.stable;
      expect(await stable()).toBe('1');
      expect(await clients.reader.logEnd(topic, 0)).toBe(4);

      expect(await clients.committer.commit(handle)).toBe('committed');
      await pollAfterCommit(topic, 0, 100, 4);
      expect(await stable()).toBe('5');
      expect(await clients.reader.logEnd(topic, 0)).toBe(5);
    });

    it('commits idempotently: again, and twice at once', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const handle = await preCommitted(topic, target().transactionalId(), 'a');
      const outcomes = await Promise.all([clients.committer.commit(handle), clients.committer.commit(handle)]);
      for (const outcome of outcomes) expect(['committed', 'already-committed']).toContain(outcome);
      expect(outcomes).toContain('committed');
      expect(await clients.committer.commit(handle)).toBe('already-committed');
      expect(values(await clients.reader.read({ topic, partition: 0, from: 0, to: 2 }))).toEqual(['a']);
    });

    it('aborts the open transaction and fences its handle when the id is initialised again', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const transactionalId = target().transactionalId();
      const first = await preCommitted(topic, transactionalId, 'lost');
      const second = await begin(transactionalId);
      const newer =
        second.handle.producerId !== first.producerId || second.handle.producerEpoch > first.producerEpoch;
      expect(newer).toBe(true);
      await expect(clients.committer.commit(first)).rejects.toBeInstanceOf(TransactionLostError);
      expect(await clients.committer.abort(first)).toBe('superseded');

      await second.write(written(topic, 'kept'));
      const handle = await second.preCommit();
      await second.close();
      expect(await clients.committer.commit(handle)).toBe('committed');
      const { records } = await pollAfterCommit(topic, 0, 100, 1);
      expect(values(records)).toEqual(['kept']);
    });

    it('tells a transaction committed before its id was initialised again from one aborted by it, by the log', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const transactionalId = target().transactionalId();
      const committed = await preCommitted(topic, transactionalId, 'committed');
      expect(committed.firstRecord).toEqual({ topic, partition: 0, offset: 0 });
      expect(await clients.committer.commit(committed)).toBe('committed');
      const lost = await preCommitted(topic, transactionalId, 'aborted by the next initialisation');
      await (await begin(transactionalId)).close();
      // The id has moved on past both: only the log still knows which one committed.
      expect(await clients.committer.commit(committed)).toBe('already-committed');
      await expect(clients.committer.commit(lost)).rejects.toBeInstanceOf(TransactionLostError);
      const { records } = await pollAfterCommit(topic, 0, 100, 1);
      expect(values(records)).toEqual(['committed']);
    });

    it('refuses writes under a fenced handle', async () => {
      const topic = await target().createTopic();
      const transactionalId = target().transactionalId();
      const zombie = await begin(transactionalId);
      await zombie.write(written(topic, 'before'));
      await begin(transactionalId);
      await expect(zombie.write(written(topic, 'after'))).rejects.toBeInstanceOf(TransactionLostError);
      await expect(zombie.preCommit()).rejects.toBeInstanceOf(TransactionLostError);
    });

    it('reports a commit after an abort as lost, and an abort after a commit as already committed', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const aborted = await preCommitted(topic, target().transactionalId(), 'x');
      expect(await clients.committer.abort(aborted)).toBe('aborted');
      expect(await clients.committer.abort(aborted)).toBe('already-aborted');
      await expect(clients.committer.commit(aborted)).rejects.toBeInstanceOf(TransactionLostError);

      const committed = await preCommitted(topic, target().transactionalId(), 'y');
      expect(await clients.committer.commit(committed)).toBe('committed');
      await expect(clients.committer.abort(committed)).rejects.toBeInstanceOf(TransactionAlreadyCommittedError);
      const { records } = await pollAfterCommit(topic, 0, 100, 1);
      expect(values(records)).toEqual(['y']);
    });

    it('drops the records of aborted transactions that nest, one begun before another and ended after it', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const logReaches = async (end: number) => expect(await logEndAfter(clients.reader, topic, end, () => target().pass(250))).toBe(end);
      const outer = await begin(target().transactionalId());
      await outer.write(written(topic, 'outer-1'));
      expect(await clients.committer.abort(await preCommitted(topic, target().transactionalId(), 'inner'))).toBe('aborted');
      await logReaches(3);
      await outer.write(written(topic, 'outer-2'));
      const outerHandle = await outer.preCommit();
      await outer.close();
      expect(await clients.committer.abort(outerHandle)).toBe('aborted');
      await logReaches(5);
      await target().append(written(topic, 'after'));

      const { records, next } = await pollAfterCommit(topic, 0, 100, 1);
      expect(records.map((r) => [r.offset, r.value?.toString()])).toEqual([[5, 'after']]);
      expect(next).toBe(6);
      expect(values(await clients.reader.read({ topic, partition: 0, from: 1, to: 6 }))).toEqual(['after']);
    });

    it('aborts a transaction left open past its timeout, and fences it', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      const transactionalId = target().transactionalId();
      const writer = await begin(transactionalId, 2_000);
      await writer.write(written(topic, 'too late'));
      const handle = await writer.preCommit();
      await writer.close();
      await target().pass(2_500);
      await stateOf(transactionalId, 'CompleteAbort');
      await expect(clients.committer.commit(handle)).rejects.toBeInstanceOf(TransactionLostError);
      const after = await clients.reader.readAvailable(topic, 0, 0, 100);
      expect(after.records).toEqual([]);
      expect(after.next).toBe(2);
    });

    it('commits an empty transaction as empty', async () => {
      const writer = await begin(target().transactionalId());
      const handle = await writer.preCommit();
      await writer.close();
      expect(await target().clients.committer.commit(handle)).toBe('empty');
    });

    it('does not know an id that never wrote', async () => {
      const { clients } = target();
      const transactionalId = target().transactionalId();
      expect(await clients.committer.describe(transactionalId)).toBeUndefined();
      const handle = { transactionalId, producerId: '1', producerEpoch: 0 };
      await expect(clients.committer.commit(handle)).rejects.toBeInstanceOf(TransactionLostError);
    });

    it('reads a range back with read_committed: aborted records and markers take offsets, and are left out', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      await target().append(written(topic, 'plain-1'));
      const committed = await preCommitted(topic, target().transactionalId(), 'committed-1', 'committed-2');
      await clients.committer.commit(committed);
      const aborted = await preCommitted(topic, target().transactionalId(), 'aborted-1');
      await clients.committer.abort(aborted);
      await target().append(written(topic, 'plain-2'));
      // plain-1 0, committed 1-2, marker 3, aborted 4, marker 5, plain-2 6
      const records = await clients.reader.read({ topic, partition: 0, from: 0, to: 7 });
      expect(values(records)).toEqual(['plain-1', 'committed-1', 'committed-2', 'plain-2']);
      expect(records.map((r) => r.offset)).toEqual([0, 1, 2, 6]);
      expect(values(await clients.reader.read({ topic, partition: 0, from: 2, to: 6 }))).toEqual(['committed-2']);
      await expect(clients.reader.read({ topic, partition: 0, from: 0, to: 9 })).rejects.toThrow(/the log ends at 7/);
    });

    it('stops a poll at the first offset of an open transaction, the last stable offset', async () => {
      const { clients } = target();
      const topic = await target().createTopic();
      await target().append(written(topic, 'before'));
      const open = await preCommitted(topic, target().transactionalId(), 'open');
      await target().append(written(topic, 'after'));
      const held = await clients.reader.readAvailable(topic, 0, 0, 100);
      expect(values(held.records)).toEqual(['before']);
      expect(held.next).toBe(1);
      await clients.committer.commit(open);
      const released = await pollAfterCommit(topic, held.next, 100, 2);
      expect(values(released.records)).toEqual(['open', 'after']);
      const limited = await clients.reader.readAvailable(topic, 0, 0, 2);
      expect(values(limited.records)).toEqual(['before', 'open']);
      expect(limited.next).toBe(2);
    });

    it('places keyed records by murmur2, as Kafka clients do, and lists partitions with their log ends', async () => {
      const { clients } = target();
      const topic = await target().createTopic(3);
      const keys = ['books', 'games', 'music', 'garden', 'toys'];
      await target().append(keys.map((key) => ({ topic, key, value: key })));
      const [description] = await clients.admin.describeTopics([topic]);
      expect(description?.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
      const placed: Record<string, number> = {};
      for (let partition = 0; partition < 3; partition++) {
        for (const record of (await clients.reader.readAvailable(topic, partition, 0, 100)).records) {
          placed[record.value?.toString() ?? ''] = partition;
        }
      }
      expect(placed).toEqual({ books: 0, games: 1, music: 1, garden: 1, toys: 0 });
      expect((await clients.admin.groupOffsets(`${topic}-group`, topic)).get(0) ?? -1).toBeLessThan(0);
    });
  });
}
