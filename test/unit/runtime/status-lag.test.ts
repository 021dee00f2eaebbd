import { describe, expect, it } from 'vitest';
import { COUNTED_LAG, committedLag } from '../../../lib/runtime/status.js';
import { KafkaTwin } from '../../../lib/testing/kafka-twin.js';

describe("a shard's lag", () => {
  it('counts committed records, not the offsets that markers and aborted records take', async () => {
    const kafka = new KafkaTwin();
    kafka.createTopic('repartition', 1);
    const writer = await kafka.beginTransaction({ transactionalId: 'tx', transactionTimeoutMs: 60_000 });
    await writer.write(['a', 'b', 'c'].map((value) => ({ topic: 'repartition', partition: 0, value })));
    await kafka.committer.commit(await writer.preCommit());
    const target = { stageId: 'stage-2', topic: 'repartition', partition: 0 };
    const logEnd = kafka.highWatermark('repartition', 0);
    expect(logEnd).toBe(4);
    expect(await committedLag(kafka.reader, target, 0, logEnd)).toBe(3);
    // Caught up: only the commit marker is left, which no consumer reads.
    expect(await committedLag(kafka.reader, target, 3, logEnd)).toBe(0);
    expect(await committedLag(kafka.reader, target, 0, COUNTED_LAG + 5)).toBe(COUNTED_LAG + 5);
  });
});
