import type { FetchedMessage, FetchPartitionResponse } from 'kafkajs/src/cluster/index.js';
import { describe, expect, it } from 'vitest';
import { committedRecords } from '../../../lib/kafka/range-reader.js';

const COMMIT = Buffer.from([0, 0, 0, 1]);
const ABORT = Buffer.from([0, 0, 0, 0]);

/** A fetched message: `data` from a producer (transactional or not), or a control marker. */
function message(offset: number, producerId: string, kind: 'data' | 'plain' | 'commit' | 'abort'): FetchedMessage {
  const control = kind === 'commit' || kind === 'abort';
  return {
    offset: String(offset),
    key: control ? (kind === 'commit' ? COMMIT : ABORT) : null,
    value: control ? null : Buffer.from(`${producerId}@${offset}`),
    timestamp: '0',
    headers: {},
    isControlRecord: control,
    batchContext: { producerId, inTransaction: kind !== 'plain', timestampType: 0 },
  };
}

function response(messages: FetchedMessage[], aborted: { producerId: string; firstOffset: number }[]) {
  return {
    partition: 0,
    errorCode: 0,
    highWatermark: '100',
    lastStableOffset: '100',
    abortedTransactions: aborted.map(({ producerId, firstOffset }) => ({ producerId, firstOffset: String(firstOffset) })),
    messages,
  } satisfies FetchPartitionResponse;
}

const offsetsOf = (messages: FetchedMessage[]) => messages.map((m) => Number(m.offset));

describe('committedRecords', () => {
  it('keeps committed and non-transactional records and drops every control record', () => {
    const fetched = response(
      [message(0, 'p', 'plain'), message(1, 'a', 'data'), message(2, 'a', 'data'), message(3, 'a', 'commit')],
      [],
    );
    expect(offsetsOf(committedRecords(fetched))).toEqual([0, 1, 2]);
  });

  it('drops interleaved aborted transactions up to their producers’ abort markers', () => {
    // a: aborted at 1..4 (marker 5); b: committed 2..6 (marker 7); c: aborted 3..8 (marker 9);
    // a writes again after its abort marker, in a transaction that commits.
    const fetched = response(
      [
        message(0, 'p', 'plain'),
        message(1, 'a', 'data'),
        message(2, 'b', 'data'),
        message(3, 'c', 'data'),
        message(4, 'a', 'data'),
        message(5, 'a', 'abort'),
        message(6, 'b', 'data'),
        message(7, 'b', 'commit'),
        message(8, 'c', 'data'),
        message(9, 'c', 'abort'),
        message(10, 'a', 'data'),
        message(11, 'p', 'plain'),
        message(12, 'a', 'commit'),
      ],
      // The broker need not list aborted transactions in order.
      [
        { producerId: 'c', firstOffset: 3 },
        { producerId: 'a', firstOffset: 1 },
      ],
    );
    expect(offsetsOf(committedRecords(fetched))).toEqual([0, 2, 6, 10, 11]);
  });

  it('returns everything when nothing was aborted', () => {
    const fetched = response([message(7, 'p', 'plain'), message(8, 'p', 'plain')], []);
    expect(offsetsOf(committedRecords(fetched))).toEqual([7, 8]);
  });
});
