import type { TransactionCommitter } from '../kafka/clients.js';
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
import type { CoordinatorStore } from '../state/coordinator-store.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import type { ShardRef, ShardStore } from '../state/shard-store.js';
import { runtimeProgressOf, type PendingTransaction, type RuntimeProgress } from './processor.js';
import type { ExecutorSnapshot } from './stage-executor.js';

export interface RollbackOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly committer: TransactionCommitter;
  readonly snapshots: SnapshotStore;
}

/** What a rollback did, for the commit function's report. */
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
 * Rolls a shard back to just before the invocation whose transaction the broker lost
 * (docs/PROTOCOL.md, "Rollback"), so that it replays that input and writes the lost output
 * again. Transactions are committed in epoch order and the first lost one stops the commit,
 * so none of the shard's later transactions is visible: they are aborted, and the keys they
 * (and the lost one) changed get their values from before, read from the snapshot chain — the
 * last committed checkpoint's objects plus the deltas of the epochs before the lost one.
 * Everything happens under a claim of its own and one commit, so a crash anywhere in it
 * leaves the shard as it was, and the next commit function run rolls back again. No later
 * checkpoint can complete meanwhile (the coordinator completes one only once its predecessor
 * is committed), so no manifest is built from the shard's state before the rollback.
 */
export async function rollBackLostTransaction(
  options: RollbackOptions,
  target: ShardPosition,
  shard: ShardRef,
  lost: PendingTransaction,
  cause: Error,
): Promise<Rollback | undefined> {
  const { plan, store, snapshots } = options;
  const claim = await store.claim(shard);
  const progress = runtimeProgressOf(claim.progress);
  // A concurrent commit function rolled it back already; this claim stays uncommitted (aborted).
  if (!progress.pending.some((p) => p.epoch === lost.epoch)) return undefined;
  const lostDelta = progress.deltas.find((d) => d.epoch === lost.epoch);
  if (!lostDelta) {
    throw new Error(
      `Shard ${shard.stage}/${shard.shard} cannot be rolled back: no state delta records epoch ${lost.epoch} (were its ` +
        `invocations run without a snapshot store?). Restore a checkpoint before ${lost.checkpoint} with sluice restore.`,
      { cause },
    );
  }
  const checkpoints = await options.coordinator.get();
  // Deltas of committed checkpoints are in the base manifest already.
  const before = progress.deltas.filter((d) => d.epoch < lost.epoch && d.checkpoint > checkpoints.committed);
  const undone = progress.deltas.filter((d) => d.epoch >= lost.epoch);
  const base = (await baseManifest(snapshots, checkpoints.committed))?.shards.find((entry) => sameShard(entry, target));
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
  const abandoned = progress.pending.filter((p) => p.epoch > lost.epoch);
  for (const { handle } of abandoned) await options.committer.abort(handle);

  const rolledBack: RuntimeProgress = {
    ...progress,
    offset: lostStart.offsetBefore,
    executor,
    // Its trigger has moved on: ticks replay what the log holds.
    catchUp: true,
    pending: progress.pending.filter((p) => p.epoch < lost.epoch),
    deltas: [...before, { epoch: claim.epoch, checkpoint: covering, object }],
    ...(inFlight
      ? {
          acknowledged: triggered,
          acknowledgedWatermark: executor?.watermark ?? Number.MIN_SAFE_INTEGER,
          position: { checkpoint: triggered, offset: lostStart.offsetBefore, executor },
        }
      : {}),
  };
  await store.commit(claim, rolledBack);
  // The checkpoint's manifest shows the shard after the lost epoch, whose output is gone:
  // restore must not start from it.
  await snapshots.put(rolledBackMarkerKey(lost.checkpoint, shard), JSON.stringify({ epoch: lost.epoch, cause: cause.message }));
  return {
    shard,
    checkpoint: lost.checkpoint,
    epoch: lost.epoch,
    offset: lostStart.offsetBefore,
    keysRestored: changes.length,
    transactionsAborted: abandoned.length,
  };
}
