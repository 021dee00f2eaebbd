// The coordinator's decisions, rule by rule, from tables: which shards a run ticks, what it does
// with a checkpoint in flight, and what it does with none.
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../lib/plan/plan.js';
import { decideInFlight, decideNext, shardsToTick, type ShardsProgress } from '../../../lib/runtime/coordinator-decision.js';
import { runtimeProgressOf, type RuntimeProgress, type ShardTarget } from '../../../lib/runtime/shard-record.js';
import { INITIAL_COORDINATOR_RECORD, type CoordinatorRecord, type RollbackRequest } from '../../../lib/state/coordinator-store.js';

const plan = { pipeline: 'p', stages: [], checkpointing: { intervalMs: 10_000, minPauseMs: 1_000, timeoutMs: 60_000 } } as unknown as Plan;
const [a, b] = [0, 1].map((partition): ShardTarget => ({ stageId: 'stage-1', topic: 'orders', partition })) as [ShardTarget, ShardTarget];
const shards = [a, b];
const acknowledged = (checkpoint: number, fields: Partial<RuntimeProgress> = {}) => runtimeProgressOf({ offset: 5, acknowledged: checkpoint, acknowledgedWatermark: 1_000, ...fields });
const progressOf = (ofA: RuntimeProgress | undefined, ofB: RuntimeProgress | undefined): ShardsProgress => new Map([[a, ofA], [b, ofB]]);
/** Checkpoint 3 in flight since t=100,000, 2 committed. */
const inFlight: CoordinatorRecord = { ...INITIAL_COORDINATOR_RECORD, version: 7, triggered: 3, triggeredAt: 100_000, completed: 2, completedAt: 95_000, committed: 2 };
const rollbackOfB: RollbackRequest = { ...b, epoch: 4, checkpoint: 3, base: 2, reason: 'lost' };

describe('shardsToTick', () => {
  const rows: { rule: string; record: CoordinatorRecord; progress: ShardsProgress; now: number; tickAfterMs?: number; ticked: ShardTarget[] }[] = [
    { rule: 'ticks the shards that have not acknowledged the checkpoint in flight', record: inFlight, progress: progressOf(acknowledged(3), acknowledged(2)), now: 100_500, ticked: [b] },
    { rule: 'ticks a shard that never committed', record: inFlight, progress: progressOf(acknowledged(3), undefined), now: 100_500, ticked: [b] },
    { rule: 'waits out the grace before ticking', record: inFlight, progress: progressOf(acknowledged(2), acknowledged(2)), now: 100_500, tickAfterMs: 1_000, ticked: [] },
    { rule: 'ticks after the grace', record: inFlight, progress: progressOf(acknowledged(2), acknowledged(2)), now: 101_000, tickAfterMs: 1_000, ticked: [a, b] },
    { rule: 'ticks a shard with a rollback to start, grace or not', record: { ...inFlight, rollbacks: [rollbackOfB] }, progress: progressOf(acknowledged(2), acknowledged(3)), now: 100_500, tickAfterMs: 1_000, ticked: [b] },
    { rule: 'leaves a rollback begun in the last 5 s alone', record: { ...inFlight, rollbacks: [{ ...rollbackOfB, attemptedAt: 98_000 }] }, progress: progressOf(acknowledged(3), acknowledged(3)), now: 100_500, ticked: [] },
    { rule: 'with none in flight, ticks only rollbacks', record: { ...inFlight, completed: 3, committed: 3, rollbacks: [rollbackOfB] }, progress: new Map(), now: 100_500, ticked: [b] },
  ];
  for (const { rule, record, progress, now, tickAfterMs, ticked } of rows) {
    it(rule, () => expect(shardsToTick(record, progress, shards, now, tickAfterMs)).toEqual(ticked));
  }
});

describe('decideInFlight', () => {
  it('completes a checkpoint every shard acknowledged, with the stage watermark the lowest of its active shards', () => {
    const decision = decideInFlight(plan, inFlight, progressOf(acknowledged(3, { acknowledgedWatermark: 700 }), acknowledged(3, { acknowledgedWatermark: 900 })), shards, 100_500);
    expect(decision).toMatchObject({ kind: 'complete', record: { completed: 3, completedAt: 100_500, completedWatermarks: { 'stage-1': 700 }, activeWatermarks: { 'stage-1': 700 } } });
  });

  it('leaves an idle shard out of its stage watermark, and keeps the stage below its earliest timer', () => {
    const idle = acknowledged(3, { acknowledgedWatermark: 500, acknowledgedIdle: true, acknowledgedNextTimer: 800 });
    const decision = decideInFlight(plan, inFlight, progressOf(acknowledged(3, { acknowledgedWatermark: 900 }), idle), shards, 100_500);
    expect(decision).toMatchObject({ kind: 'complete', record: { activeWatermarks: { 'stage-1': 900 }, completedWatermarks: { 'stage-1': 799 } } });
  });

  const waiting: { rule: string; record: CoordinatorRecord; progress: ShardsProgress; now: number }[] = [
    { rule: 'a shard has not acknowledged', record: inFlight, progress: progressOf(acknowledged(3), acknowledged(2)), now: 100_500 },
    { rule: 'its predecessor is not committed', record: { ...inFlight, committed: 1 }, progress: progressOf(acknowledged(3), acknowledged(3)), now: 100_500 },
    { rule: 'a rollback is pending', record: { ...inFlight, rollbacks: [{ ...rollbackOfB, attemptedAt: 100_000 }] }, progress: progressOf(acknowledged(3), acknowledged(3)), now: 100_500 },
  ];
  for (const { rule, record, progress, now } of waiting) {
    it(`waits while ${rule}`, () => expect(decideInFlight(plan, record, progress, shards, now)).toEqual({ kind: 'wait' }));
  }

  it('abandons a checkpoint past its timeout, triggering the next', () => {
    expect(decideInFlight(plan, inFlight, progressOf(acknowledged(3), acknowledged(2)), shards, 160_001)).toEqual({
      kind: 'abandon',
      record: { ...inFlight, triggered: 4, triggeredAt: 160_001 },
    });
  });
});

describe('decideNext', () => {
  const done: CoordinatorRecord = { ...inFlight, completed: 3, completedAt: 101_000, committed: 3 };
  const rows: { rule: string; record: CoordinatorRecord; now: number; kind: string }[] = [
    { rule: 'waits for the interval', record: done, now: 109_999, kind: 'idle' },
    { rule: 'waits for the minimum pause after the last completion', record: { ...done, completedAt: 109_500 }, now: 110_000, kind: 'idle' },
    { rule: 'triggers once both have passed', record: done, now: 110_000, kind: 'trigger' },
    { rule: 'rests after enough unchanged checkpoints, with nothing left to commit', record: { ...done, resting: { state: 's', checkpoints: 3 } }, now: 110_000, kind: 'rest' },
    { rule: 'does not rest while a checkpoint waits to commit', record: { ...done, committed: 2, resting: { state: 's', checkpoints: 3 } }, now: 110_000, kind: 'trigger' },
  ];
  for (const { rule, record, now, kind } of rows) {
    it(rule, () => expect(decideNext(plan, record, now).kind).toBe(kind));
  }

  it('triggers the next checkpoint at the time of the run', () => {
    expect(decideNext(plan, done, 110_000)).toEqual({ kind: 'trigger', record: { ...done, triggered: 4, triggeredAt: 110_000 } });
  });
});
