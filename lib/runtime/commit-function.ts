// The commit function (docs/PROTOCOL.md, "The coordinator and the commit function"): commits
// the pre-committed transactions of the latest completed checkpoint, each shard's in epoch order,
// then marks the checkpoint committed and merges its manifest's state chains.
//
// A crash anywhere leaves transactions committed and the checkpoint not yet marked: the next run,
// which every coordinator run starts while `completed > committed`, commits them again (EndTxn
// of a committed transaction is answered NONE) and marks it. A crash after the mark leaves the
// manifest unmerged, which the next checkpoint's commit merges.
//
// A stale copy can commit transactions again and request a rollback of a transaction the log
// shows did not commit. It cannot request a rollback of a committed transaction or of one whose
// checkpoint is committed, nor mark a checkpoint past a rollback request (PROTOCOL, "What a
// stale copy of each actor can and cannot do").
import type { TransactionCommitter } from '../kafka/clients.js';
import type { TransactionLostError } from '../kafka/errors.js';
import type { Plan } from '../plan/plan.js';
import type { CoordinatorStore, RollbackRequest } from '../state/coordinator-store.js';
import type { ShardRef, ShardStore } from '../state/shard-store.js';
import { checkpointManifestKey, compactShardState, readManifest, writeManifest } from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import { commitInEpochOrder } from './epoch-order.js';
import { markedCommitted, pendingRollback, requestRollback } from './rollback-requests.js';
import { runtimeProgressOf, shardRefOf, type ShardTarget } from './shard-record.js';

/**
 * Rewrites a committed checkpoint's manifest with each shard's state chain merged: the same cut
 * (positions, transactions, watermarks, and the state the chains merge to) in fewer objects. A
 * late or second run writes the same cut again, and objects are never deleted, so a reader of
 * the manifest gets a valid chain whichever write it sees.
 */
async function compactCommittedManifest(plan: Plan, snapshots: SnapshotStore, checkpoint: number): Promise<void> {
  const key = checkpointManifestKey(checkpoint);
  const manifest = await readManifest(snapshots, key);
  if (!manifest) return;
  const shards = await Promise.all(
    manifest.shards.map(async (entry) => ({ ...entry, state: await compactShardState(snapshots, shardRefOf(plan, entry), entry.state, plan.maxParallelism) })),
  );
  if (shards.every((entry, i) => entry.state.length === manifest.shards[i]?.state.length)) return;
  await writeManifest(snapshots, key, { ...manifest, shards });
}

/** A pre-committed transaction was lost: its shard must roll back to the checkpoint before and replay. */
export class CheckpointTransactionLostError extends Error {
  override readonly name = 'CheckpointTransactionLostError';

  constructor(
    readonly shard: ShardRef,
    readonly checkpoint: number,
    override readonly cause: TransactionLostError,
  ) {
    super(
      `Checkpoint ${checkpoint}, shard ${shard.stage}/${shard.shard}: ${cause.message} The shard must be rolled back to ` +
        `checkpoint ${checkpoint - 1} and replayed.`,
      { cause },
    );
  }
}

export interface CommitFunctionOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly committer: TransactionCommitter;
  readonly shards: readonly ShardTarget[];
  /** With the snapshot store, a lost transaction's shard is rolled back and replays; without, the loss is raised. */
  readonly snapshots?: SnapshotStore;
}

export interface CommitReport {
  readonly checkpoint: number;
  readonly transactions: number;
  /** Shards whose transaction the broker lost, each to be rolled back by its next invocation. */
  readonly rollbacks: readonly RollbackRequest[];
}

/**
 * The commit function: commits every pending transaction covered by the latest completed
 * checkpoint, each shard's in epoch order and the shards side by side, then records that checkpoint as committed (so
 * shards free the ids). Committing is idempotent, so a rerun or a concurrent run does no
 * harm. A lost transaction is never passed over: the coordinator record requests its shard's
 * rollback ({@link requestRollback}), which the shard's own next invocation does, or, without
 * a snapshot store, the loss is raised as {@link CheckpointTransactionLostError}. A stale run
 * that finds a transaction fenced after its checkpoint was committed does nothing: another run
 * settled it, and the id may have been reused since.
 */
export async function commitCompletedCheckpoints(options: CommitFunctionOptions): Promise<CommitReport> {
  const { plan, store, coordinator, committer, snapshots } = options;
  const record = await coordinator.get();
  if (record.completed <= record.committed) return { checkpoint: record.committed, transactions: 0, rollbacks: [] };
  const commitShard = async (target: ShardTarget): Promise<{ transactions: number; rollback?: RollbackRequest }> => {
    // Its rollback aborts what it has pending; the run that requested it committed everything before.
    if (pendingRollback(record, target)) return { transactions: 0 };
    const shard = shardRefOf(plan, target);
    const covered = runtimeProgressOf((await store.peek(shard))?.progress).pending.filter((p) => p.checkpoint <= record.completed && !p.committed);
    const { committed, lost } = await commitInEpochOrder(committer, covered);
    if (!lost) return { transactions: committed.length };
    const error = new CheckpointTransactionLostError(shard, lost.transaction.checkpoint, lost.error);
    if (!snapshots) throw error;
    const rollback = await requestRollback(coordinator, target, lost.transaction, error.message);
    return { transactions: committed.length, ...(rollback ? { rollback } : {}) };
  };
  // Shards are independent: committing them side by side makes a checkpoint's output visible
  // sooner, since each batch of a shard wrote a transaction of its own. A failure fails the run
  // only once every shard has settled, so that nothing of it is left running.
  const settled = await Promise.allSettled(options.shards.map(commitShard));
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const committed = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const transactions = committed.reduce((sum, shard) => sum + shard.transactions, 0);
  const rollbacks = committed.flatMap((shard) => (shard.rollback ? [shard.rollback] : []));
  for (let current = record; current.committed < record.completed; current = await coordinator.get()) {
    if (await coordinator.update(markedCommitted(current, record.completed))) break;
  }
  // After the commit: the output waits for none of the merges' reads.
  if (snapshots) await compactCommittedManifest(plan, snapshots, record.completed);
  return { checkpoint: record.completed, transactions, rollbacks };
}
