import type { TransactionCommitter } from '../kafka/clients.js';
import { TransactionLostError } from '../kafka/errors.js';
import type { Plan } from '../plan/plan.js';
import {
  baseManifest,
  readShardState,
  readStateDelta,
  rolledBackMarkerKey,
  sameShard,
  writeStateDelta,
  type ShardPosition,
} from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import type { CoordinatorRecord, CoordinatorStore, RollbackRequest } from '../state/coordinator-store.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import type { ShardRef, ShardStore } from '../state/shard-store.js';
import { shardRefOf } from './shard-record.js';
import { runtimeProgressOf, type PendingTransaction, type RuntimeProgress } from './shard-record.js';
import type { ExecutorSnapshot } from './stage-executor.js';

export interface RollbackOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly committer: TransactionCommitter;
  readonly snapshots: SnapshotStore;
}

/** What a rollback did, for the processor's report. */
export interface Rollback {
  readonly shard: ShardRef;
  readonly checkpoint: number;
  /** The epoch whose transaction was lost: the shard replays its input from where that epoch started. */
  readonly epoch: number;
  readonly offset: number | null;
  readonly keysRestored: number;
  readonly transactionsAborted: number;
}

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

/** What {@link commitInEpochOrder} got through. */
export interface EpochOrderCommit {
  /** The transactions now committed (by this call or before), in epoch order. */
  readonly committed: readonly PendingTransaction[];
  /** The first transaction the broker lost, and why; none after it was committed. */
  readonly lost?: { readonly transaction: PendingTransaction; readonly error: TransactionLostError };
}

/**
 * Commits a shard's pre-committed transactions in epoch order, up to the first the broker
 * lost: the transactions after a lost one are its rollback's to replay, never to commit (a
 * committed later transaction would be written again by the replay).
 */
export async function commitInEpochOrder(committer: TransactionCommitter, pending: readonly PendingTransaction[]): Promise<EpochOrderCommit> {
  const committed: PendingTransaction[] = [];
  for (const transaction of pending) {
    try {
      await committer.commit(transaction.handle);
      committed.push(transaction);
    } catch (error) {
      if (!(error instanceof TransactionLostError)) throw error;
      return { committed, lost: { transaction, error } };
    }
  }
  return { committed };
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

/**
 * Rolls a shard back to just before the invocation whose transaction the broker lost
 * (docs/PROTOCOL.md, "Rollback"), so that it replays that input and writes the lost output
 * again. The shard's own invocation does it, under its claim, when the coordinator record
 * requests it: so a rollback never competes with the shard's deliveries and ticks for the
 * shard. Transactions are committed in epoch order and the first lost one stops the commit,
 * so none of the shard's later transactions is visible: they are aborted, and the keys they
 * (and the lost one) changed get their values from before, read from the snapshot chain — the
 * base checkpoint's objects plus the deltas of the epochs before the lost one. A crash anywhere
 * before the commit leaves the shard as it was, and its next invocation rolls back again. No
 * checkpoint completes while a rollback is requested, so no manifest is built from the shard's
 * state before the rollback. Undefined when the shard has rolled back already.
 */
export async function rollBackLostTransaction(
  options: RollbackOptions,
  request: RollbackRequest,
  checkpoints: CoordinatorRecord,
): Promise<Rollback | undefined> {
  const { plan, store, snapshots } = options;
  const shard = shardRefOf(plan, request);
  const claim = await store.claim(shard);
  const progress = runtimeProgressOf(claim.progress);
  if (!progress.pending.some((p) => p.epoch === request.epoch)) {
    // An earlier attempt committed the rollback; this claim stays uncommitted (aborted).
    return undefined;
  }
  const lostDelta = progress.deltas.find((d) => d.epoch === request.epoch);
  if (!lostDelta) {
    throw new Error(
      `Shard ${shard.stage}/${shard.shard} cannot be rolled back: no state delta records epoch ${request.epoch} (were its ` +
        `invocations run without a snapshot store?). Restore a checkpoint before ${request.checkpoint} with sluice restore.`,
    );
  }
  // Deltas of the base checkpoint and older are in its manifest already.
  const before = progress.deltas.filter((d) => d.epoch < request.epoch && d.checkpoint > request.base);
  const undone = progress.deltas.filter((d) => d.epoch >= request.epoch);
  const base = (await baseManifest(snapshots, request.base))?.shards.find((entry) => sameShard(entry, request));
  const restored = await readShardState(snapshots, [...(base?.state ?? []), ...before.map((d) => d.object)], plan.maxParallelism);

  const changedKeys = new Map<string, KeyRef>();
  for (const delta of undone) {
    for (const change of (await readStateDelta(snapshots, delta.object)).changes) {
      const key = keyRef(change.key, plan.maxParallelism);
      changedKeys.set(key.serialized, key);
    }
  }
  const keys = [...changedKeys.values()];
  await store.read(claim, keys);
  const changes = keys.map((key) => ({ key, state: restored.get(key.serialized)?.state ?? null }));
  await store.write(claim, changes);

  const lostStart = await readStateDelta(snapshots, lostDelta.object);
  const executor = lostStart.executorBefore as ExecutorSnapshot | null;
  // The rollback counts as the shard's acknowledgement of a checkpoint in flight, at the
  // position it rolls back to; with none in flight, the next checkpoint covers it.
  const triggered = Math.max(progress.acknowledged, checkpoints.triggered);
  const inFlight = triggered > checkpoints.completed;
  const covering = inFlight ? triggered : triggered + 1;
  const object = await writeStateDelta(snapshots, shard, {
    epoch: claim.epoch,
    offsetBefore: progress.offset,
    executorBefore: progress.executor,
    changes,
  });
  const abandoned = progress.pending.filter((p) => p.epoch > request.epoch);
  for (const { handle } of abandoned) await options.committer.abort(handle);

  const rolledBack: RuntimeProgress = {
    ...progress,
    offset: lostStart.offsetBefore,
    executor,
    // Its trigger has moved on: ticks replay what the log holds.
    catchUp: true,
    pending: progress.pending.filter((p) => p.epoch < request.epoch),
    deltas: [...before, { epoch: claim.epoch, checkpoint: covering, object }],
    ...(inFlight
      ? {
          acknowledged: triggered,
          acknowledgedWatermark: executor?.watermark ?? Number.MIN_SAFE_INTEGER,
          acknowledgedIdle: false,
          position: { checkpoint: triggered, offset: lostStart.offsetBefore, executor },
        }
      : {}),
  };
  // The manifests of the checkpoint and of every one completed since (none completes while a
  // rollback waits) show the shard after the lost epoch, whose output is gone: restore and
  // savepoints must not start from them. Marked before the commit, so that no crash leaves one
  // unmarked; checkpoints triggered and abandoned meanwhile have no manifest to mark, and
  // marking them one by one outlasted the coordinator's tick, which fenced the rollback.
  const marker = JSON.stringify({ epoch: request.epoch, cause: request.reason });
  const tainted = Array.from({ length: Math.max(0, checkpoints.completed - request.checkpoint + 1) }, (_, i) => request.checkpoint + i);
  await Promise.all(tainted.map((checkpoint) => snapshots.put(rolledBackMarkerKey(checkpoint, shard), marker)));
  await store.commit(claim, rolledBack);
  return {
    shard,
    checkpoint: request.checkpoint,
    epoch: request.epoch,
    offset: lostStart.offsetBefore,
    keysRestored: changes.length,
    transactionsAborted: abandoned.length,
  };
}
