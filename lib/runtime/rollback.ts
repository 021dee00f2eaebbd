// The rollback, the shard's side (docs/PROTOCOL.md, "Rollback"): the shard's own invocation,
// finding its rollback requested in the coordinator record, restores the keys that the lost
// transaction's epoch and every later one changed to their values before it, aborts the later
// transactions, and moves the shard back to where the lost epoch started, under its claim.
//
// Crash rows: before the commit, the shard is as it was (the keys written are invisible under
// the claim's epoch; the taint markers and the delta object are idempotent to write again) and
// its next invocation rolls back again; after it, the request is still open until
// `finishRollback`, and the next attempt finds no pending transaction of the lost epoch and only
// finishes it. A stale copy can read the snapshot chain again and write invisible values; it
// cannot commit twice (`pending` no longer holds the lost epoch) or after a newer claim.
import type { TransactionCommitter } from '../kafka/clients.js';
import type { Plan } from '../plan/plan.js';
import {
  baseManifest,
  readShardState,
  rolledBackMarkerKey,
  sameShard,
  stateDeltaOf,
  writeStateDelta,
} from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import type { CoordinatorRecord, CoordinatorStore, RollbackRequest } from '../state/coordinator-store.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import type { ShardRef, ShardStore, StateChange } from '../state/shard-store.js';
import { beginRollback, finishRollback } from './rollback-requests.js';
import { deltaSource, runtimeProgressOf, shardRefOf, type PendingDelta, type RuntimeProgress } from './shard-record.js';
import type { ExecutorSnapshot } from './stage-executor.js';

export interface RollbackOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly committer: TransactionCommitter;
  readonly snapshots: SnapshotStore;
  readonly coordinator: CoordinatorStore;
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

/**
 * The keys that the lost epoch and every later one changed, each with its value before the lost
 * epoch: the base checkpoint's objects plus the deltas `before` it, from the snapshot chain.
 */
async function stateBeforeLostEpoch(
  { plan, snapshots }: RollbackOptions,
  request: RollbackRequest,
  progress: RuntimeProgress,
  before: readonly PendingDelta[],
): Promise<StateChange[]> {
  const base = (await baseManifest(snapshots, request.base))?.shards.find((entry) => sameShard(entry, request));
  const restored = await readShardState(snapshots, [...(base?.state ?? []), ...before.map(deltaSource)], plan.maxParallelism);
  const changedKeys = new Map<string, KeyRef>();
  for (const delta of progress.deltas.filter((d) => d.epoch >= request.epoch)) {
    for (const change of (await stateDeltaOf(snapshots, deltaSource(delta))).changes) {
      const key = keyRef(change.key, plan.maxParallelism);
      changedKeys.set(key.serialized, key);
    }
  }
  return [...changedKeys.values()].map((key) => ({ key, state: restored.get(key.serialized)?.state ?? null }));
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
async function rollBackLostTransaction(
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
  const changes = await stateBeforeLostEpoch(options, request, progress, before);
  await store.read(
    claim,
    changes.map(({ key }) => key),
  );
  await store.write(claim, changes);

  const lostStart = await stateDeltaOf(snapshots, deltaSource(lostDelta));
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

/**
 * Does the rollback the coordinator record requests of this shard, as its invocation, instead
 * of processing: records the attempt (so that the coordinator ticks the shard no faster than a
 * rollback takes), rolls back, and marks the request done.
 */
export async function rollBackShard(
  options: RollbackOptions,
  request: RollbackRequest,
  checkpoints: CoordinatorRecord,
  now: number,
): Promise<Rollback | undefined> {
  await beginRollback(options.coordinator, request, now);
  const rollback = await rollBackLostTransaction(options, request, checkpoints);
  await finishRollback(options.coordinator, request);
  return rollback;
}
