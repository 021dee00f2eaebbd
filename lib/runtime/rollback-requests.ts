// The coordinator record's rollback transitions (docs/PROTOCOL.md, "Rollback"). The commit
// function requests a rollback when it finds a transaction lost; the shard's own invocation
// begins and finishes it (lib/runtime/rollback.ts); the coordinator ticks a shard with a
// rollback to do, and completes no checkpoint while one is pending; the commit that marks a
// checkpoint forgets the requests it covers.
//
// Each transition is a conditional update of the record, retried on a newer version: a stale
// copy of any actor can only redo a transition already made (idempotent: a request is found by
// shard and epoch), never undo one, and never request a rollback for a committed checkpoint.
import { sameShard, type ShardPosition } from '../snapshot/checkpoint-state.js';
import type { CoordinatorRecord, CoordinatorStore, RollbackRequest } from '../state/coordinator-store.js';
import { invariant } from '../invariants.js';
import type { PendingTransaction } from './shard-record.js';

/** Whether `request` is the rollback of `target`'s transaction of `epoch`. */
export function isRollbackOf(request: RollbackRequest, target: ShardPosition, epoch: number): boolean {
  return sameShard(request, target) && request.epoch === epoch;
}

/** The shard's rollback that still has to be done, if any. */
export function pendingRollback(record: CoordinatorRecord, target: ShardPosition): RollbackRequest | undefined {
  return record.rollbacks?.find((request) => !request.done && sameShard(request, target));
}

/**
 * How long an invocation that began a rollback has before the coordinator ticks the shard
 * again: each tick claims the shard, so ticking faster than a rollback takes would fence every
 * attempt in turn.
 */
export const ROLLBACK_RETRY_MS = 5_000;

/** The shard's rollback, if one is to be done and no invocation began it in the last {@link ROLLBACK_RETRY_MS}. */
export function rollbackToStart(record: CoordinatorRecord, target: ShardPosition, now: number): RollbackRequest | undefined {
  const request = pendingRollback(record, target);
  return request && (request.attemptedAt === undefined || now - request.attemptedAt >= ROLLBACK_RETRY_MS) ? request : undefined;
}

/** Records that an invocation begins the rollback now. */
export async function beginRollback(coordinator: CoordinatorStore, begun: RollbackRequest, now: number): Promise<void> {
  for (;;) {
    const current = await coordinator.get();
    const requests = current.rollbacks ?? [];
    if (!requests.some((request) => isRollbackOf(request, begun, begun.epoch) && !request.done)) return;
    const rollbacks = requests.map((request) =>
      isRollbackOf(request, begun, begun.epoch) ? { ...request, attemptedAt: now } : request,
    );
    if (await coordinator.update({ ...current, rollbacks })) return;
  }
}

/** Whether any shard still has to roll back: no checkpoint completes meanwhile. */
export function rollbacksPending(record: CoordinatorRecord): boolean {
  return (record.rollbacks ?? []).some((request) => !request.done);
}

/**
 * Records that the broker lost `lost` (the commit function calls it), for the shard's own next
 * invocation to roll back. Undefined when the checkpoint that covered it is committed already:
 * then another run settled it — committed it before a later invocation reused its transactional
 * id (which is why this one saw it fenced), or requested the rollback, which may be done by now.
 */
export async function requestRollback(
  coordinator: CoordinatorStore,
  target: ShardPosition,
  lost: PendingTransaction,
  reason: string,
): Promise<RollbackRequest | undefined> {
  for (;;) {
    const current = await coordinator.get();
    if (current.committed >= lost.checkpoint) return undefined;
    const existing = current.rollbacks?.find((request) => isRollbackOf(request, target, lost.epoch));
    if (existing) return existing;
    const request: RollbackRequest = { ...target, epoch: lost.epoch, checkpoint: lost.checkpoint, base: current.committed, reason };
    if (await coordinator.update({ ...current, rollbacks: [...(current.rollbacks ?? []), request] })) return request;
  }
}

/** Marks the request done, or forgets it once its checkpoint is committed (which held the stage's watermark). */
export async function finishRollback(coordinator: CoordinatorStore, done: RollbackRequest): Promise<void> {
  for (;;) {
    const current = await coordinator.get();
    const requests = current.rollbacks ?? [];
    const rest = requests.filter((request) => !isRollbackOf(request, done, done.epoch));
    if (rest.length === requests.length) return;
    const rollbacks = current.committed >= done.checkpoint ? rest : [...rest, { ...done, done: true }];
    if (await coordinator.update({ ...current, rollbacks })) return;
  }
}

/**
 * The coordinator record with `checkpoint` marked committed: each stage takes its watermark at
 * that checkpoint, except a stage that lost a transaction the checkpoint covered, which keeps
 * its previous one (its replayed output is not visible yet, and would reach later stages late);
 * the requests of rollbacks that are done and covered are forgotten.
 */
export function markedCommitted(current: CoordinatorRecord, checkpoint: number): CoordinatorRecord {
  invariant(
    current.committed < checkpoint && checkpoint <= current.completed,
    () => `a commit marks checkpoint ${checkpoint}, where the coordinator record has committed ${current.committed} and completed ${current.completed}`,
  );
  const committedWatermarks = { ...current.completedWatermarks };
  const requests = current.rollbacks ?? [];
  for (const request of requests) {
    if (request.checkpoint > checkpoint) continue;
    const kept = current.committedWatermarks[request.stageId];
    if (kept === undefined) delete committedWatermarks[request.stageId];
    else committedWatermarks[request.stageId] = kept;
  }
  const rollbacks = requests.filter((request) => !(request.done === true && request.checkpoint <= checkpoint));
  return { ...current, committed: checkpoint, committedWatermarks, rollbacks };
}

