// The coordinator's decisions (docs/PROTOCOL.md, "The coordinator and the commit function"), as
// pure functions of its record, the shards' progress and the time: which shards to tick, and
// whether to complete, abandon or wait for a checkpoint in flight, or to trigger the next one or
// rest. coordinator.ts reads what they need and writes what they decide; the decisions are
// tested from tables (test/unit/runtime/coordinator-decision.test.ts).
import type { Plan } from '../plan/plan.js';
import { nextCheckpointDueAt, type CoordinatorRecord } from '../state/coordinator-store.js';
import { RESTING_CHECKPOINTS, restingState } from './quiescence.js';
import { rollbacksPending, rollbackToStart } from './rollback-requests.js';
import type { RuntimeProgress, ShardTarget } from './shard-record.js';

export type ShardsProgress = ReadonlyMap<ShardTarget, RuntimeProgress | undefined>;

/**
 * The shards a run ticks: a shard with a rollback to start, always (its next invocation does
 * it); with a checkpoint in flight, and once its `tickAfterMs` grace is over, each shard that
 * has not acknowledged it.
 */
export function shardsToTick(
  record: CoordinatorRecord,
  progress: ShardsProgress,
  shards: readonly ShardTarget[],
  now: number,
  tickAfterMs?: number,
): ShardTarget[] {
  const inFlight = record.triggered > record.completed;
  const ticking = inFlight && (tickAfterMs === undefined || now - record.triggeredAt >= tickAfterMs);
  return shards.filter((target) => rollbackToStart(record, target, now) || (ticking && lags(record, progress, target)));
}

function lags(record: CoordinatorRecord, progress: ShardsProgress, target: ShardTarget): boolean {
  return (progress.get(target)?.acknowledged ?? 0) < record.triggered;
}

/**
 * Each stage's watermarks at the checkpoint. Its active watermark is the minimum over its
 * shards' acknowledged watermarks, leaving out idle shards (as Flink leaves out idle splits); a
 * stage whose shards are all idle passes on the highest watermark they reached, never going
 * back. Its idle shards follow that one and fire their timers by it, a checkpoint later, so its
 * completed watermark, the one later stages see, stays below each idle shard's earliest timer.
 */
function stageWatermarks(progress: ShardsProgress, before: CoordinatorRecord): { activeWatermarks: Record<string, number>; completedWatermarks: Record<string, number> } {
  const active = new Map<string, number>();
  const idle = new Map<string, number>();
  const belowTimers = new Map<string, number>();
  for (const [target, shardProgress] of progress) {
    const watermark = shardProgress?.acknowledgedWatermark ?? Number.MIN_SAFE_INTEGER;
    if (shardProgress?.acknowledgedIdle !== true) {
      active.set(target.stageId, Math.min(active.get(target.stageId) ?? Number.MAX_SAFE_INTEGER, watermark));
      continue;
    }
    idle.set(target.stageId, Math.max(idle.get(target.stageId) ?? Number.MIN_SAFE_INTEGER, watermark));
    const timer = shardProgress.acknowledgedNextTimer;
    if (timer !== undefined) belowTimers.set(target.stageId, Math.min(belowTimers.get(target.stageId) ?? Number.MAX_SAFE_INTEGER, timer - 1));
  }
  const activeWatermarks: Record<string, number> = {};
  for (const [stageId, watermark] of idle) {
    const previous = before.activeWatermarks?.[stageId] ?? before.completedWatermarks[stageId] ?? Number.MIN_SAFE_INTEGER;
    activeWatermarks[stageId] = Math.max(previous, watermark);
  }
  for (const [stageId, watermark] of active) activeWatermarks[stageId] = watermark;
  const completedWatermarks = { ...activeWatermarks };
  for (const [stageId, bound] of belowTimers) completedWatermarks[stageId] = Math.min(activeWatermarks[stageId] ?? bound, bound);
  return { activeWatermarks, completedWatermarks };
}

/** What a run does with a checkpoint in flight, once it has read (and ticked) the shards: the record to write, if any. */
export type InFlightDecision =
  | { readonly kind: 'complete'; readonly record: CoordinatorRecord }
  | { readonly kind: 'abandon'; readonly record: CoordinatorRecord }
  | { readonly kind: 'wait' };

/**
 * A checkpoint completes once every shard has acknowledged it, its predecessor is committed and
 * no rollback is pending (a rolled-back shard must not end up in a manifest built from its state
 * before); the completion records the stages' watermarks and, when the pipeline looks as it did,
 * one more checkpoint toward rest. Past the checkpoint timeout it is abandoned: the next one
 * covers its output.
 */
export function decideInFlight(plan: Plan, record: CoordinatorRecord, progress: ShardsProgress, shards: readonly ShardTarget[], now: number): InFlightDecision {
  const acknowledged = shards.every((target) => !lags(record, progress, target) && !rollbackToStart(record, target, now));
  if (acknowledged && record.committed === record.completed && !rollbacksPending(record)) {
    const { activeWatermarks, completedWatermarks } = stageWatermarks(progress, record);
    const state = restingState(plan, progress, completedWatermarks);
    const resting = state === undefined ? undefined : { state, checkpoints: record.resting?.state === state ? record.resting.checkpoints + 1 : 1 };
    const { resting: _previous, ...rest } = record;
    return {
      kind: 'complete',
      record: { ...rest, completed: record.triggered, completedAt: now, completedWatermarks, activeWatermarks, ...(resting ? { resting } : {}) },
    };
  }
  if (now - record.triggeredAt > plan.checkpointing.timeoutMs) return { kind: 'abandon', record: { ...record, triggered: record.triggered + 1, triggeredAt: now } };
  return { kind: 'wait' };
}

/** What a run does with no checkpoint in flight. */
export type NextDecision = { readonly kind: 'idle' } | { readonly kind: 'rest' } | { readonly kind: 'trigger'; readonly record: CoordinatorRecord };

/**
 * The next checkpoint is triggered once the interval and the minimum pause have passed, unless
 * checkpoints have found the pipeline unchanged often enough, with nothing left to commit: then
 * the coordinator rests instead (docs/PROTOCOL.md, "At rest").
 */
export function decideNext(plan: Plan, record: CoordinatorRecord, now: number): NextDecision {
  if (plan.checkpointing.intervalMs <= 0) return { kind: 'idle' };
  if (record.triggered > 0 && now < nextCheckpointDueAt(record, plan.checkpointing)) return { kind: 'idle' };
  if ((record.resting?.checkpoints ?? 0) >= RESTING_CHECKPOINTS && record.committed === record.completed && !rollbacksPending(record)) return { kind: 'rest' };
  return { kind: 'trigger', record: { ...record, triggered: record.triggered + 1, triggeredAt: now } };
}
