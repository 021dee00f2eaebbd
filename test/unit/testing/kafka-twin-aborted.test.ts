// The twin's aborted-transaction index: what a read_committed consumer is told to drop.
import { describe, expect, it } from 'vitest';
import { KafkaTwin } from '../../../lib/testing/kafka-twin.js';

const writeTo = (topic: string, value: string) => [{ topic, partition: 0, value }];

describe('KafkaTwin.abortedTransactions', () => {
  it('lists each aborted transaction of a partition by its first offset and its marker, leaving out committed ones and plain records', async () => {
    const kafka = new KafkaTwin();
    kafka.createTopic('out', 1);
    const outer = await kafka.beginTransaction({ transactionalId: 'outer', transactionTimeoutMs: 60_000 });
    await outer.write(writeTo('out', 'outer-1')); // offset 0
    const inner = await kafka.beginTransaction({ transactionalId: 'inner', transactionTimeoutMs: 60_000 });
    await inner.write(writeTo('out', 'inner-1')); // offset 1
    await kafka.committer.abort(await inner.preCommit()); // marker at 2
    kafka.append(writeTo('out', 'plain')); // offset 3
    await kafka.committer.abort(await outer.preCommit()); // marker at 4
    const committed = await kafka.beginTransaction({ transactionalId: 'committed', transactionTimeoutMs: 60_000 });
    await committed.write(writeTo('out', 'kept')); // offset 5
    await kafka.committer.commit(await committed.preCommit()); // marker at 6, once written

    expect(kafka.abortedTransactions('out', 0)).toEqual([
      { firstOffset: 1, markerOffset: 2 },
      { firstOffset: 0, markerOffset: 4 },
    ]);
    expect(kafka.committedRecords('out').map((r) => [r.offset, r.value?.toString()])).toEqual([
      [3, 'plain'],
      [5, 'kept'],
    ]);
  });

  it('lists a transaction that its timeout aborted', async () => {
    let now = Date.UTC(2026, 11, 1);
    const kafka = new KafkaTwin({ clock: () => now });
    kafka.createTopic('out', 1);
    const writer = await kafka.beginTransaction({ transactionalId: 'slow', transactionTimeoutMs: 1_000 });
    await writer.write(writeTo('out', 'late'));
    now += 1_001;

    expect(kafka.abortedTransactions('out', 0)).toEqual([{ firstOffset: 0, markerOffset: 1 }]);
  });
});
