// At rest (docs/PROTOCOL.md, "At rest"): when checkpoints find the pipeline unchanged with
// nothing left to commit, the coordinator stops triggering them and turns its own schedule off,
// so that an idle pipeline costs nothing; a batch that takes input after that wakes it. This
// module holds the rules every actor shares: when the state counts as unchanged, when a batch
// must look at the coordinator record after its commit, and how anyone wakes the coordinator.
// The coordinator's own transitions (going to rest, a resting run) are in coordinator.ts.
//
// Crash rows: a coordinator that dies after recording that it rests, before turning its schedule
// off, runs again on schedule and finds itself resting (a resting run); one that dies after
// turning it off with a shard moved since is woken by that shard's batch, which reads the record
// after its commit. A stale copy can turn the schedule off or on again (both idempotent, and a
// resting run reads the record again after pausing); it cannot rest over a shard that moved,
// since it records the rest before it looks at the shards.
import type { Plan } from '../plan/plan.js';
import type { CoordinatorRecord, CoordinatorStore } from '../state/coordinator-store.js';
import type { ShardTarget } from './shard-record.js';
import { uncommittedDeltas, uncommittedPending, type RuntimeProgress } from './shard-record.js';

/**
 * Checkpoints in a row that must find the pipeline as it was before the coordinator may rest:
 * a watermark that reached one stage at a checkpoint reaches the next at the one after, and its
 * output is committed at the one after that.
 */
export const RESTING_CHECKPOINTS = 3;

/**
 * Whether the coordinator may go to rest before it looks at a batch's commit, judged from the
 * record the batch read at its start; if not, the batch need not read the record again after
 * its commit (docs/PROTOCOL.md, "At rest"). Resting takes RESTING_CHECKPOINTS completions in a
 * row that find one state, and while the batch holds its shard's claim at most one more can
 * complete (the one its shard acknowledged before): each later one needs an acknowledgement of
 * the shard, which only the batch's own commit, or a claim that fences the batch, can give.
 */
export function mayRestBeforeCommitSeen(atStart: CoordinatorRecord): boolean {
  return atStart.asleep === true || (atStart.resting?.checkpoints ?? 0) + 1 >= RESTING_CHECKPOINTS;
}

/**
 * What a checkpoint's completion records of the pipeline's state, to see whether time alone
 * still changes it: every shard's offset, watermark, idleness and event-time timers, and each
 * stage's watermark. Undefined while something would change with time even without input —
 * a processing-time timer, a source partition still to turn idle, an input watermark held, a
 * shard catching up or failing at a record, a shard that never ran — so that such a pipeline
 * never rests.
 */
export function restingState(
  plan: Plan,
  progress: ReadonlyMap<ShardTarget, RuntimeProgress | undefined>,
  stageWatermarks: Readonly<Record<string, number>>,
): string | undefined {
  const shards: string[] = [];
  for (const [target, shard] of progress) {
    if (!shard || shard.catchUp || shard.heldInputWatermark || shard.failure) return undefined;
    const timers = shard.executor?.timers ?? [];
    if (timers.some((timer) => timer.domain === 'processing')) return undefined;
    const stage = plan.stages.find((s) => s.id === target.stageId);
    const turnsIdle = stage?.input.kind === 'source' && stage.input.source.watermarks.idlenessMs !== undefined;
    if (turnsIdle && shard.acknowledgedIdle !== true) return undefined;
    shards.push(`${target.stageId} ${target.topic}/${target.partition}@${shard.offset}:${shard.executor?.watermark}:${shard.acknowledgedIdle === true}:${timers.length}`);
  }
  return JSON.stringify({ shards: shards.sort(), stageWatermarks });
}

/** Output or state that a checkpoint after `committed` has still to commit. */
export function hasUncommittedWork(progress: ReadonlyMap<ShardTarget, RuntimeProgress | undefined>, committed: number): boolean {
  return [...progress.values()].some((shard) => uncommittedPending(shard, committed).length > 0 || uncommittedDeltas(shard, committed).length > 0);
}

/**
 * The coordinator's schedule, which a resting coordinator turns off so that no function runs
 * (on AWS its EventBridge rule; offline mode's loop), and an awake one on. Both are idempotent.
 */
export interface CoordinatorSchedule {
  pause(): Promise<void>;
  resume(): Promise<void>;
}

/**
 * Wakes a resting coordinator, its record and then its schedule (which stays as it is for an
 * awake one). Safe to run by anyone, at any time: the coordinator's own runs, `sluice resume`
 * and `restore`.
 */
export async function wakeCoordinator(coordinator: CoordinatorStore, schedule: CoordinatorSchedule | undefined): Promise<void> {
  for (;;) {
    const record = await coordinator.get();
    if (!record.asleep) return;
    // Forgetting the resting state makes the next rest wait for checkpoints that find it anew.
    const { asleep: _asleep, resting: _resting, ...awake } = record;
    if (await coordinator.update(awake)) break;
  }
  await schedule?.resume();
}
