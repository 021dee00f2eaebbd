// Kafka transactions written in one OS process and finished in another (DESIGN.md,
// invariant 4), against the real broker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KafkaAdmin,
  KafkaCommitter,
  TransactionalWriter,
  TransactionLostError,
  type OpenTransaction,
  type TransactionHandle,
} from '../../../lib/kafka/index.js';
import { consumeAll, runChild, testBrokers, uniqueName } from '../../helpers/kafka.js';

interface Written {
  handle: TransactionHandle;
  open: OpenTransaction;
  aborted: { producerId: string; producerEpoch: number; state: string } | null;
}

const values = (from: number, count: number) => Array.from({ length: count }, (_, i) => `value-${from + i}`);

let admin: KafkaAdmin;
let committer: KafkaCommitter;

beforeAll(() => {
  admin = new KafkaAdmin({ brokers: testBrokers() });
  committer = new KafkaCommitter({ brokers: testBrokers() });
});

afterAll(async () => {
  await committer.close();
  await admin.close();
});

async function newTopic(partitions = 1): Promise<string> {
  const topic = uniqueName('txn');
  await admin.ensureTopics([{ topic, partitions }]);
  return topic;
}

describe('a transaction written by one process', () => {
  it('is invisible until a second process commits it by handle, then visible exactly once, in order', async () => {
    const topic = await newTopic();
    const transactionalId = uniqueName('cross-process');

    const written = await runChild<Written>({ action: 'write', transactionalId, topic, from: 0, count: 1000 });
    expect(written.handle.transactionalId).toBe(transactionalId);
    expect(written.aborted).toBeNull();

    const beforeCommit = await consumeAll(topic, { expected: 0, settleMs: 2_000 });
    expect(beforeCommit).toEqual([]);

    expect(await runChild<{ outcome: string }>({ action: 'commit', handle: written.handle })).toEqual({
      outcome: 'committed',
    });
    const afterCommit = await consumeAll(topic, { expected: 1000 });
    expect(afterCommit.map((m) => m.value)).toEqual(values(0, 1000));
    expect(afterCommit.map((m) => m.offset)).toEqual([...afterCommit.keys()]);

    expect(await runChild<{ outcome: string }>({ action: 'commit', handle: written.handle })).toEqual({
      outcome: 'already-committed',
    });
    const afterSecondCommit = await consumeAll(topic, { expected: 1000 });
    expect(afterSecondCommit.map((m) => m.value)).toEqual(values(0, 1000));
  });

  it('can be continued by another process that knows its sequence numbers, then committed by a third', async () => {
    const topic = await newTopic(3);
    const transactionalId = uniqueName('resumed');

    const first = await runChild<Written>({ action: 'write', transactionalId, topic, from: 0, count: 600 });
    const second = await runChild<Written>({ action: 'resume', open: first.open, topic, from: 600, count: 600 });
    expect(second.handle).toEqual(first.handle);
    expect(second.open.partitions.reduce((sum, p) => sum + p.nextSequence, 0)).toBe(1200);

    expect(await runChild<{ outcome: string }>({ action: 'commit', handle: second.handle })).toEqual({
      outcome: 'committed',
    });
    const consumed = await consumeAll(topic, { expected: 1200 });
    expect(consumed.map((m) => m.value).sort()).toEqual(values(0, 1200).sort());
    for (const partition of [0, 1, 2]) {
      const numbers = consumed.filter((m) => m.partition === partition).map((m) => Number(m.value?.slice(6)));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    }
  });

  it('is aborted when another process initialises its transactional id, and committing it then is a loss', async () => {
    const topic = await newTopic();
    const transactionalId = uniqueName('fenced');

    const stale = await runChild<Written>({ action: 'write', transactionalId, topic, from: 0, count: 100 });
    const fresh = await runChild<Written>({ action: 'write', transactionalId, topic, from: 100, count: 10 });
    expect(fresh.aborted).toMatchObject({
      producerId: stale.handle.producerId,
      producerEpoch: stale.handle.producerEpoch,
      state: 'Ongoing',
    });
    expect(fresh.handle.producerEpoch).toBeGreaterThan(stale.handle.producerEpoch);

    const lost = await runChild<{ lost?: string }>({ action: 'commit', handle: stale.handle });
    expect(lost.lost).toMatch(/is lost/);
    await expect(committer.commit(stale.handle)).rejects.toBeInstanceOf(TransactionLostError);

    expect(await committer.commit(fresh.handle)).toBe('committed');
    const consumed = await consumeAll(topic, { expected: 10 });
    expect(consumed.map((m) => m.value)).toEqual(values(100, 10));
  });

  it('is aborted by the broker when its timeout passes, and committing it then raises TransactionLostError', async () => {
    const topic = await newTopic();
    const transactionalId = uniqueName('timed-out');

    const written = await runChild<Written>({
      action: 'write',
      transactionalId,
      topic,
      from: 0,
      count: 50,
      transactionTimeoutMs: 1_500,
    });
    // The broker looks for expired transactions every second (infra/kafka/server.properties).
    await expect
      .poll(async () => (await committer.describe(transactionalId))?.state, { timeout: 15_000, interval: 250 })
      .toBe('CompleteAbort');

    const error = await committer.commit(written.handle).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionLostError);
    expect((error as TransactionLostError).handle).toEqual(written.handle);
    expect(await consumeAll(topic, { expected: 0, settleMs: 1_500 })).toEqual([]);
  });

  it('can be aborted by handle from another process, after which commit is a loss and abort is a no-op', async () => {
    const topic = await newTopic();
    const transactionalId = uniqueName('aborted');

    const written = await runChild<Written>({ action: 'write', transactionalId, topic, from: 0, count: 20 });
    expect(await runChild<{ outcome: string }>({ action: 'abort', handle: written.handle })).toEqual({
      outcome: 'aborted',
    });
    expect(await committer.abort(written.handle)).toBe('already-aborted');
    await expect(committer.commit(written.handle)).rejects.toBeInstanceOf(TransactionLostError);
    expect(await consumeAll(topic, { expected: 0, settleMs: 1_500 })).toEqual([]);
  });

  it('is committed once when two commits race', async () => {
    const topic = await newTopic();
    const { writer } = await TransactionalWriter.begin({
      brokers: testBrokers(),
      transactionalId: uniqueName('racing'),
      transactionTimeoutMs: 60_000,
    });
    await writer.write(values(0, 200).map((value) => ({ topic, value })));
    const handle = await writer.preCommit();
    await writer.close();

    const outcomes = await Promise.all([
      runChild<{ outcome: string }>({ action: 'commit', handle }),
      runChild<{ outcome: string }>({ action: 'commit', handle }),
    ]);
    for (const { outcome } of outcomes) expect(['committed', 'already-committed']).toContain(outcome);
    const consumed = await consumeAll(topic, { expected: 200 });
    expect(consumed.map((m) => m.value)).toEqual(values(0, 200));
  });

  it('refuses a transaction timeout above the broker maximum with a message that says the fix', async () => {
    await expect(
      TransactionalWriter.begin({
        brokers: testBrokers(),
        transactionalId: uniqueName('too-long'),
        transactionTimeoutMs: 24 * 3_600_000,
      }),
    ).rejects.toThrow(/transaction\.max\.timeout\.ms/);
  });
});
