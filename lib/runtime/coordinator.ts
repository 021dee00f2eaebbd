import { KafkaAdmin } from '../kafka/admin.js';
import type { KafkaCommitter } from '../kafka/committer.js';
import { TransactionLostError } from '../kafka/errors.js';
import type { Plan } from '../plan/plan.js';
import type { CoordinatorRecord, CoordinatorStore } from '../state/coordinator-store.js';
import type { ShardRef, ShardStore } from '../state/shard-store.js';
import { shardOf, type RuntimeProgress } from './processor.js';

/** One shard of the pipeline: a partition of a stage's input topic. */
export interface ShardTarget {
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
}

/** Every shard of every stage, from the input topics' partition counts. */
export async function listShards(plan: Plan, admin: KafkaAdmin): Promise<ShardTarget[]> {
  const targets: ShardTarget[] = [];
  for (const stage of plan.stages) {
    const { input } = stage;
    if (input.kind === 'repartition') {
      for (let partition = 0; partition < input.partitions; partition++) targets.push({ stageId: stage.id, topic: input.topic, partition });
      continue;
    }
    const { topics, topicPattern } = input.source.source.config;
    const names = topics ?? (await admin.listTopics()).filter((topic) => topicPattern?.test(topic)).sort();
    for (const description of await admin.describeTopics(names)) {
      for (const { partition } of description.partitions) targets.push({ stageId: stage.id, topic: description.topic, partition });
    }
  }
  return targets;
}

function shardRefOf(plan: Plan, target: ShardTarget): ShardRef {
  const stage = plan.stages.find((s) => s.id === target.stageId);
  if (!stage) throw new Error(`Pipeline ${plan.pipeline} has no ${target.stageId}`);
  return shardOf(stage, target.topic, target.partition);
}

export interface CoordinatorOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly shards: readonly ShardTarget[];
  /** Runs the processor on a shard with no records, so that an idle shard acknowledges and its time moves. */
  readonly tick: (target: ShardTarget) => Promise<void>;
  readonly clock?: () => number;
}

export type CoordinatorOutcome = 'triggered' | 'completed' | 'waiting' | 'abandoned' | 'idle';

async function progressOf(options: CoordinatorOptions, target: ShardTarget): Promise<RuntimeProgress | undefined> {
  const record = await options.store.peek(shardRefOf(options.plan, target));
  return record?.progress as RuntimeProgress | undefined;
}

/** Each stage's watermark at the checkpoint: the minimum over its shards' acknowledged watermarks. */
function stageWatermarks(progress: ReadonlyMap<ShardTarget, RuntimeProgress | undefined>): Record<string, number> {
  const watermarks: Record<string, number> = {};
  for (const [target, shardProgress] of progress) {
    const watermark = shardProgress?.acknowledgedWatermark ?? Number.MIN_SAFE_INTEGER;
    watermarks[target.stageId] = Math.min(watermarks[target.stageId] ?? Number.MAX_SAFE_INTEGER, watermark);
  }
  return watermarks;
}

/**
 * One scheduled run of the coordinator (docs/PROTOCOL.md). With a checkpoint in flight it
 * ticks the shards that have not acknowledged it yet and completes it once all have, or
 * abandons it after the checkpoint timeout (the next one covers its output); otherwise it
 * triggers the next checkpoint when the interval and the minimum pause have passed.
 */
export async function runCoordinator(options: CoordinatorOptions): Promise<{ outcome: CoordinatorOutcome; record: CoordinatorRecord }> {
  const { plan, coordinator } = options;
  const now = (options.clock ?? Date.now)();
  const record = await coordinator.get();
  const save = async (next: CoordinatorRecord, outcome: CoordinatorOutcome) =>
    (await coordinator.update(next)) ? { outcome, record: next } : { outcome: 'waiting' as const, record: await coordinator.get() };

  if (record.triggered > record.completed) {
    // Each shard record is read once, and read again only for shards that had to be ticked.
    const progress = new Map<ShardTarget, RuntimeProgress | undefined>();
    for (const target of options.shards) progress.set(target, await progressOf(options, target));
    const lagging = (targets: readonly ShardTarget[]) =>
      targets.filter((target) => (progress.get(target)?.acknowledged ?? 0) < record.triggered);
    const ticked = lagging(options.shards);
    for (const target of ticked) {
      await options.tick(target);
      progress.set(target, await progressOf(options, target));
    }
    if (lagging(ticked).length === 0) {
      const completedWatermarks = stageWatermarks(progress);
      return save({ ...record, completed: record.triggered, completedAt: now, completedWatermarks }, 'completed');
    }
    if (now - record.triggeredAt > plan.checkpointing.timeoutMs) {
      return save({ ...record, triggered: record.triggered + 1, triggeredAt: now }, 'abandoned');
    }
    return { outcome: 'waiting', record };
  }
  const { intervalMs, minPauseMs } = plan.checkpointing;
  if (intervalMs <= 0) return { outcome: 'idle', record };
  const due = Math.max(record.triggeredAt + intervalMs, record.completedAt + minPauseMs);
  if (record.triggered > 0 && now < due) return { outcome: 'idle', record };
  return save({ ...record, triggered: record.triggered + 1, triggeredAt: now }, 'triggered');
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
  readonly committer: KafkaCommitter;
  readonly shards: readonly ShardTarget[];
}

/**
 * The commit function: commits every pending transaction covered by the latest completed
 * checkpoint, then records that checkpoint as committed (so shards free the ids). Committing
 * is idempotent, so a rerun or a concurrent run does no harm; a lost transaction is raised as
 * {@link CheckpointTransactionLostError}, never passed over.
 */
export async function commitCompletedCheckpoints(options: CommitFunctionOptions): Promise<{ checkpoint: number; transactions: number }> {
  const { plan, store, coordinator, committer } = options;
  const record = await coordinator.get();
  if (record.completed <= record.committed) return { checkpoint: record.committed, transactions: 0 };
  let transactions = 0;
  for (const target of options.shards) {
    const shard = shardRefOf(plan, target);
    const progress = (await store.peek(shard))?.progress as RuntimeProgress | undefined;
    for (const { handle, checkpoint } of progress?.pending ?? []) {
      if (checkpoint > record.completed) continue;
      try {
        await committer.commit(handle);
        transactions++;
      } catch (error) {
        if (error instanceof TransactionLostError) throw new CheckpointTransactionLostError(shard, checkpoint, error);
        throw error;
      }
    }
  }
  for (let current = record; current.committed < record.completed; current = await coordinator.get()) {
    const next = { ...current, committed: record.completed, committedWatermarks: record.completedWatermarks };
    if (await coordinator.update(next)) break;
  }
  return { checkpoint: record.completed, transactions };
}
