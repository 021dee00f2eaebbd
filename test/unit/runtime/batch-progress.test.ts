// The progress a batch commits (the processor's step 7), rule by rule, from a table.
import { describe, expect, it } from 'vitest';
import type { TransactionHandle } from '../../../lib/kafka/transaction-handle.js';
import { batchProgress, type BatchOutcome } from '../../../lib/runtime/batch-progress.js';
import { InvariantViolation } from '../../../lib/invariants.js';
import { runtimeProgressOf, type PendingTransaction, type RuntimeProgress } from '../../../lib/runtime/shard-record.js';
import type { ExecutorSnapshot } from '../../../lib/runtime/stage-executor.js';
import type { StateDelta } from '../../../lib/snapshot/checkpoint-state.js';

const handle = (epoch: number): TransactionHandle => ({ transactionalId: `t-${epoch}`, producerId: '1', producerEpoch: epoch });
const pending = (epoch: number, checkpoint: number): PendingTransaction => ({ handle: handle(epoch), checkpoint, epoch });
const executor = (watermark: number, timers: number[] = []): ExecutorSnapshot =>
  ({ watermark, timers: timers.map((timestamp) => ({ domain: 'event', timestamp, key: { serialized: '"k"' } })) }) as unknown as ExecutorSnapshot;

/** A shard that acknowledged checkpoint 3 at offset 10, watermark 100, holding epoch 4's transaction and delta for checkpoint 4. */
const claimed: RuntimeProgress = runtimeProgressOf({
  offset: 10,
  executor: executor(100),
  acknowledged: 3,
  acknowledgedWatermark: 100,
  acknowledgedIdle: false,
  pending: [pending(2, 3), pending(4, 4)],
  deltas: [
    { epoch: 2, checkpoint: 3, object: 'd-2' },
    { epoch: 4, checkpoint: 4, object: 'd-4' },
  ],
  position: { checkpoint: 3, offset: 10, executor: executor(100) },
});

/** A delta of `epoch` that sets key `key` to `count`. */
const change = (epoch: number, key: string, count: number): StateDelta => ({ epoch, offsetBefore: epoch * 10, executorBefore: null, changes: [{ key, state: { count } }] });

const outcome = (changes: Partial<BatchOutcome>): BatchOutcome => ({
  shard: { stage: 'stage-1/orders', shard: 0 },
  claimed,
  epoch: 5,
  committed: 3,
  triggered: 3,
  processed: { offset: 20, executor: executor(200, [250]) },
  idle: false,
  pending: [pending(4, 4)],
  transaction: handle(5),
  delta: { object: 'd-5' },
  ...changes,
});

describe('batchProgress', () => {
  const rows: { rule: string; changes: Partial<BatchOutcome>; expected: Partial<RuntimeProgress> }[] = [
    {
      rule: 'with no new checkpoint, keeps the acknowledgement and covers its output by the next checkpoint',
      changes: {},
      expected: {
        offset: 20,
        acknowledged: 3,
        acknowledgedWatermark: 100,
        acknowledgedIdle: false,
        position: claimed.position,
        pending: [pending(4, 4), pending(5, 4)],
        deltas: [
          { epoch: 4, checkpoint: 4, object: 'd-4' },
          { epoch: 5, checkpoint: 4, object: 'd-5' },
        ],
      },
    },
    {
      rule: 'acknowledges a checkpoint triggered since, at its new position, and covers its output by it',
      changes: { triggered: 4 },
      expected: {
        acknowledged: 4,
        acknowledgedWatermark: 200,
        acknowledgedIdle: false,
        acknowledgedNextTimer: undefined,
        position: { checkpoint: 4, offset: 20, executor: executor(200, [250]) },
        pending: [pending(4, 4), pending(5, 4)],
      },
    },
    {
      rule: 'an idle shard records its earliest timer with its acknowledgement',
      changes: { triggered: 4, idle: true },
      expected: { acknowledgedIdle: true, acknowledgedNextTimer: 250 },
    },
    {
      rule: 'records a delta held inline as it records an object',
      changes: { delta: { inline: { epoch: 5, offsetBefore: 10, executorBefore: null, changes: [{ key: 'k', state: { count: 1 } }] } } },
      expected: {
        deltas: [
          { epoch: 4, checkpoint: 4, object: 'd-4' },
          { epoch: 5, checkpoint: 4, inline: { epoch: 5, offsetBefore: 10, executorBefore: null, changes: [{ key: 'k', state: { count: 1 } }] } },
        ],
      },
    },
    {
      rule: 'puts an extended inline delta in the place of the last one when the same checkpoint covers both',
      changes: {
        claimed: { ...claimed, deltas: [{ epoch: 4, checkpoint: 4, inline: change(4, 'k', 1) }] },
        transaction: undefined,
        delta: { inline: change(5, 'k', 2), extended: change(4, 'k', 2) },
      },
      expected: { deltas: [{ epoch: 4, checkpoint: 4, inline: change(4, 'k', 2) }] },
    },
    {
      rule: 'records an extended delta as its own when another checkpoint covers the last one',
      changes: {
        // It acknowledged checkpoint 4 after the last delta: its own delta is the next one's.
        claimed: { ...claimed, acknowledged: 4, deltas: [{ epoch: 4, checkpoint: 4, inline: change(4, 'k', 1) }] },
        triggered: 4,
        transaction: undefined,
        delta: { inline: change(5, 'k', 2), extended: change(4, 'k', 2) },
      },
      expected: {
        deltas: [
          { epoch: 4, checkpoint: 4, inline: change(4, 'k', 1) },
          { epoch: 5, checkpoint: 5, inline: change(5, 'k', 2) },
        ],
      },
    },
    {
      rule: 'never acknowledges a checkpoint before the one it acknowledged',
      changes: { triggered: 2 },
      expected: { acknowledged: 3, position: claimed.position },
    },
    {
      rule: 'drops the deltas a committed checkpoint covers, and records no transaction or delta it did not write',
      changes: { committed: 4, triggered: 5, pending: [], transaction: undefined, delta: undefined },
      expected: { acknowledged: 5, pending: [], deltas: [] },
    },
  ];
  for (const { rule, changes, expected } of rows) {
    it(rule, () => {
      expect(batchProgress(outcome(changes))).toMatchObject(expected);
    });
  }

  it('keeps what the batch processed: offset, executor and flags', () => {
    const processed = { offset: 30, executor: executor(300), catchUp: true as const };
    expect(batchProgress(outcome({ processed }))).toMatchObject(processed);
  });

  it('refuses output that a committed checkpoint would cover', () => {
    expect(() => batchProgress(outcome({ committed: 4 }))).toThrow(InvariantViolation);
    expect(() => batchProgress(outcome({ committed: 4 }))).toThrow(/stage-1\/orders\/0, epoch 5: its output would be covered by checkpoint 4, not after the committed 4/);
  });

  it('refuses pending epochs that do not increase', () => {
    expect(() => batchProgress(outcome({ pending: [pending(6, 4)] }))).toThrow(/pending epochs 6, 5 do not increase/);
  });
});
