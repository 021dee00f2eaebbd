import { BROADCAST_KEY } from '../api/transformations.js';
import type { CommittedReader, TransactionCommitter } from '../kafka/clients.js';
import { OutputCommit } from '../api/environment.js';
import { TransactionAlreadyCommittedError, TransactionLostError } from '../kafka/errors.js';
import { partitionForKey } from '../kafka/partitioning.js';
import type { Plan, Stage } from '../plan/plan.js';
import {
  checkpointManifestKey,
  isRolledBack,
  listCheckpoints,
  readManifest,
  readShardState,
  savepointManifestKey,
  writeManifest,
  writeStateDelta,
  type CheckpointManifest,
  type ManifestShard,
} from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import type { CoordinatorStore } from '../state/coordinator-store.js';
import { keyAsRecordKey, type KeyRef } from '../state/keys.js';
import { ShardFencedError, type KeyState, type ShardClaim, type ShardStore } from '../state/shard-store.js';
import { commitCompletedCheckpoints } from './commit-function.js';
import { shardRefOf, type ShardTarget } from './shard-record.js';
import { runtimeProgressOf, type RuntimeProgress } from './shard-record.js';
import type { ExecutorSnapshot, TimerSnapshot } from './stage-executor.js';

/**
 * A savepoint asked for while the latest committed checkpoint cannot be saved: a lost
 * transaction's rollback is still to be done, or was done on it. The pipeline must run on, to
 * the rollback's end and a checkpoint after it.
 */
export class SavepointNotReadyError extends Error {
  override readonly name = 'SavepointNotReadyError';
}

export interface SavepointOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly committer: TransactionCommitter;
  readonly snapshots: SnapshotStore;
  /** Every shard of the pipeline, whose completed checkpoint's transactions the savepoint commits first. */
  readonly shards: readonly ShardTarget[];
  readonly clock?: () => number;
}

/**
 * Writes a named savepoint: the latest committed checkpoint, each shard's state merged into
 * one object, under `savepoints/<name>/manifest.json`. Savepoints are never overwritten.
 * A completed checkpoint is committed first, as the commit function would: one that a commit
 * function left halfway has output already visible, which the savepoint's state must include.
 */
export async function writeSavepoint(options: SavepointOptions, name: string): Promise<{ checkpoint: number; key: string }> {
  const { plan, snapshots } = options;
  const key = savepointManifestKey(name);
  if (await snapshots.get(key)) throw new Error(`Savepoint ${name} exists already; choose another name`);
  await commitCompletedCheckpoints(options);
  const record = await options.coordinator.get();
  const rollbacks = (record.rollbacks ?? []).filter((request) => !request.done);
  if (rollbacks.length > 0) {
    throw new SavepointNotReadyError(
      `${rollbacks.map((r) => `${r.stageId} ${r.topic}/${r.partition}`).join(', ')} lost a transaction of checkpoint ` +
        `${rollbacks.map((r) => r.checkpoint).join(', ')}, and the shard's own invocation has yet to roll it back: checkpoint ` +
        `${record.committed}'s state still holds what that transaction's output was lost with. Let the pipeline run until ` +
        `sluice status shows no rollback pending, then take the savepoint.`,
    );
  }
  const { committed } = record;
  if (committed > 0 && (await isRolledBack(snapshots, committed))) {
    throw new SavepointNotReadyError(
      `Checkpoint ${committed}, the latest committed, lost a transaction and one of its shards was rolled back: its ` +
        `manifest is not the state it committed. Let the pipeline run until a later checkpoint commits, then take the savepoint.`,
    );
  }
  const past = await perBatchOutputPast(options, committed);
  if (past) {
    throw new SavepointNotReadyError(
      `${past.stageId} ${past.topic}/${past.partition} has output visible past checkpoint ${committed}, the latest committed ` +
        `(OutputCommit.PER_BATCH), which a restore of this savepoint would write again. Stop the pipeline's triggers, let the ` +
        `coordinator commit a checkpoint that covers everything processed, then take the savepoint.`,
    );
  }
  const manifest = await restorableManifest(snapshots, { checkpoint: committed });
  const shards: ManifestShard[] = [];
  for (const entry of manifest.shards) {
    const state = await readShardState(snapshots, entry.state, plan.maxParallelism);
    const changes = [...state.values()];
    const object = await writeStateDelta(snapshots, shardRefOf(plan, entry), { epoch: null, offsetBefore: null, executorBefore: null, changes });
    shards.push({ ...entry, state: [object] });
  }
  await writeManifest(snapshots, key, { ...manifest, createdAt: (options.clock ?? Date.now)(), shards });
  return { checkpoint: committed, key };
}

/**
 * A shard committed output after the snapshot being restored (OutputCommit.PER_BATCH makes
 * output visible before its checkpoint): replaying from the snapshot would write it again. The
 * restore refuses before it changes anything it cannot undo.
 */
export class OutputPastSnapshotError extends Error {
  override readonly name = 'OutputPastSnapshotError';
}

function outputPastSnapshot(shard: ShardTarget, checkpoint: number): OutputPastSnapshotError {
  return new OutputPastSnapshotError(
    `${shard.stageId} ${shard.topic}/${shard.partition} committed output after checkpoint ${checkpoint} (OutputCommit.PER_BATCH), ` +
      `which restoring it would write again. Stop the pipeline's triggers, let the coordinator commit a checkpoint that covers ` +
      `everything processed (sluice status), take a new savepoint and restore that.`,
  );
}

/**
 * With per-batch output commit, the shard whose output is visible past the latest committed
 * checkpoint, if any: a savepoint of that checkpoint would replay it.
 */
async function perBatchOutputPast(options: Pick<SavepointOptions, 'plan' | 'store' | 'shards'>, committed: number): Promise<ShardTarget | undefined> {
  const { plan, store } = options;
  if (plan.checkpointing.outputCommit !== OutputCommit.PER_BATCH) return undefined;
  for (const target of options.shards) {
    const progress = runtimeProgressOf((await store.peek(shardRefOf(plan, target)))?.progress);
    if (progress.pending.some((p) => p.checkpoint > committed)) return target;
  }
  return undefined;
}

/** What to restore: a checkpoint by number, or a savepoint by name. */
export type RestoreSource = { readonly checkpoint: number } | { readonly savepoint: string };

async function restorableManifest(snapshots: SnapshotStore, source: RestoreSource): Promise<CheckpointManifest> {
  if ('savepoint' in source) {
    const manifest = await readManifest(snapshots, savepointManifestKey(source.savepoint));
    if (!manifest) throw new Error(`There is no savepoint named ${source.savepoint} in the snapshot store`);
    return manifest;
  }
  const { checkpoint } = source;
  if (checkpoint <= 0) throw new Error('No checkpoint has been committed yet: there is nothing to restore or save');
  const manifest = await readManifest(snapshots, checkpointManifestKey(checkpoint));
  if (!manifest) {
    const available = await listCheckpoints(snapshots);
    throw new Error(`Checkpoint ${checkpoint} has no manifest; the snapshot store holds checkpoints ${available.join(', ') || 'none'}`);
  }
  if (await isRolledBack(snapshots, checkpoint)) {
    throw new Error(
      `Checkpoint ${checkpoint} lost a transaction and one of its shards was rolled back: restore the checkpoint after it ` +
        `or the one before`,
    );
  }
  return manifest;
}

export interface RestoreOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly committer: TransactionCommitter;
  /** Whether a partition holds records past a snapshot's offset, which a restore must not move keys away from. */
  readonly reader: CommittedReader;
  /** Aborts whatever a shard's transactional ids hold open (`Processor.abortTransactionsOf`), once the restore has claimed it. */
  readonly abortTransactionsOf: (target: ShardTarget) => Promise<void>;
  readonly snapshots: SnapshotStore;
  /** Every shard of the pipeline as it is now: its partition counts may differ from the snapshot's. */
  readonly shards: readonly ShardTarget[];
  readonly clock?: () => number;
}

export interface RestoreReport {
  /** The checkpoint number the restored state was recorded under: later checkpoints build on it. */
  readonly checkpoint: number;
  readonly shards: number;
  readonly keys: number;
  /** Items of keyed state (packs and spilled keys) deleted before the restored keys were written. */
  readonly itemsDeleted: number;
  readonly transactionsCommitted: number;
  readonly transactionsAborted: number;
}

/** A new shard's restored part: its keys, timers and position. */
interface RestoredShard {
  readonly target: ShardTarget;
  readonly keys: Map<string, { key: KeyRef; state: KeyState }>;
  readonly timers: TimerSnapshot[];
  offset: number | null;
  executor: ExecutorSnapshot | null;
}

function key(target: { stageId: string; topic: string; partition: number }): string {
  return `${target.stageId}\u0000${target.topic}\u0000${target.partition}`;
}

/**
 * Restores a checkpoint or a savepoint into the pipeline's state table, for a stopped pipeline
 * (docs/PROTOCOL.md, "Restore"). Keyed state and timers move by key to the shard that will
 * receive the key's records — Kafka's default partitioner over the current partition count —
 * so a source topic that grew from 4 to 8 partitions, or a pipeline moved to another topic,
 * gets the same results as an uninterrupted run. Shards that existed keep their offsets; new
 * ones start where their source's OffsetsInitializer says. The restored state becomes a new
 * checkpoint (numbered after every existing one, so no object is overwritten) on which the
 * following checkpoints build.
 */
export async function restoreSnapshot(options: RestoreOptions, source: RestoreSource): Promise<RestoreReport> {
  try {
    return await restoreState(options, source);
  } catch (error) {
    if (!(error instanceof ShardFencedError)) throw error;
    throw new RestoreInterruptedError(
      `An invocation claimed a shard while the restore held it (${error.message}): the pipeline's triggers are not ` +
        `stopped, or an invocation was still running. Stop the triggers, wait out the function timeout, and run the restore ` +
        `again; it replaces what it did.`,
      { cause: error },
    );
  }
}

/** Commits the transactions of the checkpoint to restore, which a restore makes visible first; returns how many. */
async function commitSnapshotTransactions(committer: TransactionCommitter, manifest: CheckpointManifest, committedBefore: number): Promise<number> {
  let committed = 0;
  for (const entry of manifest.shards) {
    for (const handle of entry.transactions) {
      try {
        await committer.commit(handle);
      } catch (error) {
        if (!(error instanceof TransactionLostError)) throw error;
        throw new Error(
          `Checkpoint ${manifest.checkpoint} cannot be restored: the broker lost one of its transactions ` +
            `(${error.message}) Restore the checkpoint before it, ${committedBefore}, instead.`,
          { cause: error },
        );
      }
      committed++;
    }
  }
  return committed;
}

/** Claims every shard, old and new, and aborts what they wrote past the snapshot. */
async function fenceShards(
  options: RestoreOptions,
  everyShard: readonly ShardTarget[],
  committedUpTo: number,
): Promise<{ claims: Map<string, { claim: ShardClaim; progress: RuntimeProgress }>; transactionsAborted: number }> {
  const { plan, store, committer } = options;
  const claims = new Map<string, { claim: ShardClaim; progress: RuntimeProgress }>();
  let transactionsAborted = 0;
  for (const target of everyShard) {
    const claim = await store.claim(shardRefOf(plan, target), [], { replacingState: true });
    const progress = runtimeProgressOf(claim.progress);
    claims.set(key(target), { claim, progress });
    for (const pending of progress.pending.filter((p) => p.checkpoint > committedUpTo)) {
      await committer.abort(pending.handle).catch((error: unknown) => {
        // Committed by its own invocation since the check above, before this claim fenced it.
        throw error instanceof TransactionAlreadyCommittedError ? outputPastSnapshot(target, committedUpTo) : error;
      });
      transactionsAborted++;
    }
    // What attempts and zombies left open: the commit below moves the shard's last committed
    // epoch past them, so that no later invocation sweeps their slots.
    await options.abortTransactionsOf(target);
  }
  return { claims, transactionsAborted };
}

/**
 * Writes a claimed shard's restored keys and commits it at the restore's checkpoint, with its
 * delta object; returns its entry in that checkpoint's manifest (none for a shard the snapshot
 * gave nothing).
 */
async function writeRestoredShard(
  { store, snapshots }: RestoreOptions,
  { claim, progress }: { claim: ShardClaim; progress: RuntimeProgress },
  shard: RestoredShard | undefined,
  checkpoint: number,
): Promise<ManifestShard | undefined> {
  const changes = [...(shard?.keys.values() ?? [])];
  await store.read(
    claim,
    changes.map((change) => change.key),
  );
  await store.write(claim, changes);
  const executor = shard?.executor ?? null;
  const offset = shard?.offset ?? null;
  const watermark = executor?.watermark ?? Number.MIN_SAFE_INTEGER;
  const object = shard ? await writeStateDelta(snapshots, claim.shard, { epoch: claim.epoch, offsetBefore: null, executorBefore: null, changes }) : undefined;
  // What the shard learnt after the snapshot goes: a held input watermark offered later would
  // let the replayed records of an earlier stage reach this one late; a failure was at a record
  // it may not reach again in the same way.
  const { heldInputWatermark: _held, failure: _failure, acknowledgedIdle: _idle, catchUp: _catchUp, ...kept } = progress;
  await store.commit(claim, {
    ...kept,
    offset,
    executor,
    pending: [],
    // The trigger may be past the restored offset already: ticks read what lies between.
    ...(offset === null ? {} : { catchUp: true }),
    acknowledged: checkpoint,
    acknowledgedWatermark: watermark,
    deltas: [],
    position: { checkpoint, offset, executor },
  } satisfies RuntimeProgress);
  return shard && object ? { ...shard.target, offset, executor, acknowledgedWatermark: watermark, transactions: [], state: [object] } : undefined;
}

/** A restore that an invocation overtook: run it again once nothing runs. */
export class RestoreInterruptedError extends Error {
  override readonly name = 'RestoreInterruptedError';
}

async function restoreState(options: RestoreOptions, source: RestoreSource): Promise<RestoreReport> {
  const { plan, store, coordinator, committer, snapshots } = options;
  const manifest = await restorableManifest(snapshots, source);
  const before = await coordinator.get();
  for (const entry of manifest.shards) {
    if (!plan.stages.some((stage) => stage.id === entry.stageId)) {
      throw new Error(`The snapshot holds state of ${entry.stageId}, which pipeline ${plan.pipeline} does not have`);
    }
  }
  // Worked out before anything changes, so that a restore it refuses leaves the pipeline as it was.
  const restored = new Map<string, RestoredShard>();
  for (const target of options.shards) restored.set(key(target), { target, keys: new Map(), timers: [], offset: null, executor: null });
  for (const stage of plan.stages) await redistribute(options, stage, manifest, restored);

  // The snapshot's own transactions become visible first (committing is idempotent).
  const committedNow = 'checkpoint' in source && source.checkpoint > before.committed;
  const transactionsCommitted = committedNow ? await commitSnapshotTransactions(committer, manifest, before.committed) : 0;
  const committedUpTo = Math.max(before.committed, committedNow ? manifest.checkpoint : 0);
  const past = await perBatchOutputPast(options, committedUpTo);
  if (past) throw outputPastSnapshot(past, committedUpTo);

  const everyShard = [...options.shards, ...manifest.shards.filter((entry) => !options.shards.some((t) => key(t) === key(entry)))];
  const { claims, transactionsAborted } = await fenceShards(options, everyShard, committedUpTo);
  const itemsDeleted = await store.deleteKeyedState();

  const checkpoint = Math.max(before.triggered, manifest.checkpoint, ...(await listCheckpoints(snapshots))) + 1;
  const shards: ManifestShard[] = [];
  let keys = 0;
  for (const [id, claimed] of claims) {
    const shard = restored.get(id);
    keys += shard?.keys.size ?? 0;
    const entry = await writeRestoredShard(options, claimed, shard, checkpoint);
    if (entry) shards.push(entry);
  }
  const now = (options.clock ?? Date.now)();
  await writeManifest(snapshots, checkpointManifestKey(checkpoint), {
    format: 1,
    pipeline: plan.pipeline,
    checkpoint,
    createdAt: now,
    watermarks: manifest.watermarks,
    shards,
  });
  for (let current = await coordinator.get(); ; current = await coordinator.get()) {
    const next = {
      ...current,
      triggered: checkpoint,
      triggeredAt: now,
      completed: checkpoint,
      completedAt: now,
      committed: checkpoint,
      completedWatermarks: manifest.watermarks,
      activeWatermarks: manifest.watermarks,
      committedWatermarks: manifest.watermarks,
    };
    if (await coordinator.update(next)) break;
  }
  return { checkpoint, shards: shards.length, keys, itemsDeleted, transactionsCommitted, transactionsAborted };
}

/**
 * A key that leaves its shard may leave behind records that the snapshot had not read: they
 * would reach that shard without the key's state, while the key's later records reach another.
 * Records written after the partitions were added are where the key's others are, and can stay.
 */
async function refuseStrandedRecords(reader: CommittedReader, stage: Stage, entry: ManifestShard, partitionsNow: number): Promise<void> {
  for (let from = entry.offset ?? 0; ; ) {
    const { records, next } = await reader.readAvailable(entry.topic, entry.partition, from, 10_000);
    if (records.length === 0) return;
    const stranded = records.find((record) => record.key !== null && partitionForKey(record.key.toString('utf8'), partitionsNow) !== entry.partition);
    if (stranded) {
      throw new Error(
        `${entry.topic} partition ${entry.partition} holds a record at offset ${stranded.offset}, after the snapshot's ` +
          `${stage.id} had read it (offset ${entry.offset ?? 'none'}), whose key belongs to another partition now that ` +
          `${entry.topic} has ${partitionsNow}: restored, the key's state would move there, away from this record. Take ` +
          `the snapshot once the pipeline has read every record written before the partitions were added (pause the ` +
          `producers, let it catch up, take a savepoint, add the partitions, restore, resume the producers), or restore ` +
          `with the partition count the snapshot had.`,
      );
    }
    from = next;
  }
}

/** Moves one stage's keys and timers from the snapshot's shards to the shards they belong to now. */
async function redistribute(
  options: RestoreOptions,
  stage: Stage,
  manifest: CheckpointManifest,
  restored: Map<string, RestoredShard>,
): Promise<void> {
  const entries = manifest.shards.filter((entry) => entry.stageId === stage.id);
  const targets = options.shards.filter((target) => target.stageId === stage.id);
  const partitions = new Map<string, number>();
  for (const target of targets) partitions.set(target.topic, Math.max(partitions.get(target.topic) ?? 0, target.partition + 1));
  const unchanged = entries.every((entry) => restored.has(key(entry))) && entries.length === targets.length;
  if (!unchanged && stage.input.kind === 'repartition' && entries.length > 0) {
    throw new Error(
      `The snapshot's ${stage.id} reads ${stage.input.topic} with ${entries.length} partitions, the pipeline now with ` +
        `${targets.length}: records in flight in the repartition topic would reach shards without their keys' state. ` +
        `Keep the parallelism at ${entries.length} when restoring this snapshot`,
    );
  }
  const [onlyTopic, ...otherTopics] = [...partitions.keys()];
  const shardOfKey = (entryTopic: string, k: KeyRef): RestoredShard => {
    const topic = partitions.has(entryTopic) ? entryTopic : otherTopics.length === 0 ? onlyTopic : undefined;
    const count = topic === undefined ? undefined : partitions.get(topic);
    if (topic === undefined || count === undefined) {
      throw new Error(`${stage.id} no longer reads ${entryTopic} and reads several topics: there is no telling where its keys belong`);
    }
    const shard = restored.get(key({ stageId: stage.id, topic, partition: partitionForKey(keyAsRecordKey(k), count) }));
    if (!shard) throw new Error(`${stage.id} has no shard for ${topic} partition ${partitionForKey(keyAsRecordKey(k), count)}`);
    return shard;
  };

  // A shard whose keys came from several old shards must not run ahead of any of them that was
  // active: the stage's watermark, which an idle shard does not hold back, as Flink's does not.
  const stageWatermark = manifest.watermarks[stage.id] ?? Number.MIN_SAFE_INTEGER;
  for (const entry of entries) {
    const executor = entry.executor as ExecutorSnapshot | null;
    const same = restored.get(key(entry));
    let moved = false;
    for (const { key: k, state } of (await readShardState(options.snapshots, entry.state, options.plan.maxParallelism)).values()) {
      // Each shard keeps its own copy of the broadcast state; a repartition stage keeps its shards.
      const shard = k.value === BROADCAST_KEY ? same : shardOfKey(entry.topic, k);
      shard?.keys.set(k.serialized, { key: k, state });
      moved ||= shard !== same;
    }
    for (const timer of executor?.timers ?? []) {
      const shard = shardOfKey(entry.topic, timer.key);
      shard.timers.push(timer);
      moved ||= shard !== same;
    }
    const partitionsNow = partitions.get(entry.topic);
    if (moved && partitionsNow !== undefined) await refuseStrandedRecords(options.reader, stage, entry, partitionsNow);
    if (same) same.offset = entry.offset;
  }
  for (const target of targets) {
    const shard = restored.get(key(target));
    if (!shard) continue;
    const own = entries.find((entry) => key(entry) === key(target))?.executor as ExecutorSnapshot | null | undefined;
    shard.executor = {
      watermark: unchanged ? (own?.watermark ?? Number.MIN_SAFE_INTEGER) : stageWatermark,
      partitions: own?.partitions ?? [],
      timers: shard.timers,
    };
  }
}
