// The coordinator (docs/PROTOCOL.md, "The coordinator and the commit function"): triggers
// checkpoints, ticks shards that have not acknowledged or have a rollback to do, writes a
// complete checkpoint's manifest, marks it complete, and starts the commit function
// (lib/runtime/commit-function.ts); at rest, it turns its own schedule off.
//
// A crash after any step leaves what the next run repairs (PROTOCOL's table of the coordinator's
// steps): a triggered checkpoint is ticked on, a manifest of a checkpoint not marked complete is
// written again as the same cut, the commit function is started again while
// `completed > committed`. A stale copy can write a manifest of the cut it read while the record
// was unchanged; it cannot mark anything, since every mark is conditional on the record's version.
import type { Plan } from '../plan/plan.js';
import type { CoordinatorRecord, CoordinatorStore } from '../state/coordinator-store.js';
import type { ShardStore } from '../state/shard-store.js';
import {
  baseManifest,
  checkpointManifestKey,
  compactShardState,
  mergeOverdue,
  sameShard,
  storeStateSources,
  writeManifest,
  type CheckpointManifest,
  type ManifestShard,
} from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import { decideInFlight, decideNext, shardsToTick } from './coordinator-decision.js';
import { invariant } from '../invariants.js';
import { deltaSource, runtimeProgressOf, shardRefOf, type RuntimeProgress, type ShardTarget } from './shard-record.js';
import { hasUncommittedWork, restingState, wakeCoordinator, type CoordinatorSchedule } from './quiescence.js';

export interface CoordinatorOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly shards: readonly ShardTarget[];
  /** Runs the processor on a shard with no records, so that an idle shard acknowledges and its time moves. */
  readonly tick: (target: ShardTarget) => Promise<void>;
  /** Where checkpoints' manifests go; without it, checkpoints keep no snapshot. */
  readonly snapshots?: SnapshotStore;
  readonly clock?: () => number;
  /** Turns the coordinator's schedule off as it goes to rest, and on again if it must wake at once. */
  readonly schedule?: CoordinatorSchedule;
  /**
   * How long a checkpoint in flight leaves its shards to acknowledge it with their own batches
   * before the coordinator ticks those that have not (default: no wait). A coordinator that
   * runs often while a checkpoint is in flight, to complete it as soon as the last shard
   * acknowledges, waits so that it does not tick, and so fence, shards whose batches are on their way.
   */
  readonly tickAfterMs?: number;
}

export type CoordinatorOutcome = 'triggered' | 'completed' | 'waiting' | 'abandoned' | 'idle' | 'asleep';

export interface CoordinatorRun {
  readonly outcome: CoordinatorOutcome;
  readonly record: CoordinatorRecord;
}

async function progressOf(options: CoordinatorOptions, target: ShardTarget): Promise<RuntimeProgress | undefined> {
  const record = await options.store.peek(shardRefOf(options.plan, target));
  return record ? runtimeProgressOf(record.progress) : undefined;
}

/** Every shard's progress, the shards read side by side: a coordinator looks at all of them every run while a checkpoint is in flight. */
async function progressOfAll(options: CoordinatorOptions): Promise<Map<ShardTarget, RuntimeProgress | undefined>> {
  const read = await Promise.all(options.shards.map(async (target) => [target, await progressOf(options, target)] as const));
  return new Map(read);
}

/**
 * Writes checkpoint `checkpoint`'s manifest (docs/PROTOCOL.md, "S3 snapshots"): for each shard,
 * its position when it acknowledged, and its state as the previous manifest's objects plus
 * the deltas this checkpoint covers — so the cost follows what changed since.
 */
async function writeCheckpointManifest(
  options: CoordinatorOptions & { readonly snapshots: SnapshotStore },
  record: CoordinatorRecord,
  previous: CheckpointManifest | undefined,
  progress: ReadonlyMap<ShardTarget, RuntimeProgress | undefined>,
  watermarks: Record<string, number>,
  now: number,
): Promise<void> {
  const { plan, snapshots } = options;
  const checkpoint = record.triggered;
  // The commit function merges the chains after the commit (compactCommittedManifest). Merges
  // left overdue run here, each shard's side by side, since the checkpoint's output waits for them.
  const entries = await Promise.all(
    [...progress].map(async ([target, shardProgress]): Promise<ManifestShard | undefined> => {
      if (!shardProgress) return undefined;
      const before = previous?.shards.find((entry) => sameShard(entry, target))?.state ?? [];
      const covered = shardProgress.deltas.filter((d) => d.checkpoint > record.completed && d.checkpoint <= checkpoint);
      const shard = shardRefOf(plan, target);
      const chain = [...before, ...(await storeStateSources(snapshots, shard, covered.map(deltaSource), plan.maxParallelism))];
      const position = shardProgress.position;
      return {
        ...target,
        offset: position?.offset ?? null,
        executor: position?.executor ?? null,
        acknowledgedWatermark: shardProgress.acknowledgedWatermark,
        // Only what this checkpoint commits: older handles may still be pending in the record, but
        // they are committed, and their ids may have been reused since.
        transactions: shardProgress.pending.filter((p) => p.checkpoint > record.committed && p.checkpoint <= checkpoint).map((p) => p.handle),
        state: mergeOverdue(before) ? await compactShardState(snapshots, shard, chain, plan.maxParallelism) : chain,
      };
    }),
  );
  const shards = entries.filter((entry): entry is ManifestShard => entry !== undefined);
  await writeManifest(snapshots, checkpointManifestKey(checkpoint), {
    format: 1,
    pipeline: plan.pipeline,
    checkpoint,
    createdAt: now,
    watermarks,
    shards,
  });
}

function checkpointsOf({ triggered, completed, committed }: CoordinatorRecord): string {
  return `triggered ${triggered}, completed ${completed}, committed ${committed}`;
}

/** Writes `next` over `record`, which it read: the checkpoints never go back, and stay ordered. */
async function save(options: CoordinatorOptions, record: CoordinatorRecord, next: CoordinatorRecord, outcome: CoordinatorOutcome): Promise<CoordinatorRun> {
  invariant(
    next.triggered >= record.triggered && next.completed >= record.completed && next.committed <= next.completed && next.completed <= next.triggered,
    () => `the coordinator would move its checkpoints from ${checkpointsOf(record)} to ${checkpointsOf(next)}`,
  );
  const { coordinator } = options;
  return (await coordinator.update(next)) ? { outcome, record: next } : { outcome: 'waiting', record: await coordinator.get() };
}

/**
 * One scheduled run of the coordinator (docs/PROTOCOL.md). With a checkpoint in flight it
 * ticks the shards that have not acknowledged it yet and completes it once all have, or
 * abandons it after the checkpoint timeout (the next one covers its output); otherwise it
 * triggers the next checkpoint when the interval and the minimum pause have passed, or rests.
 * What it decides, coordinator-decision.ts decides from what this reads.
 */
export async function runCoordinator(options: CoordinatorOptions): Promise<CoordinatorRun> {
  const now = (options.clock ?? Date.now)();
  const record = await options.coordinator.get();
  if (record.asleep) return restOrWake(options, record);
  if (record.triggered > record.completed) return runInFlight(options, record, now);
  // A rollback waits for no checkpoint: the shard's invocation does it now.
  for (const target of shardsToTick(record, new Map(), options.shards, now)) await options.tick(target);
  const next = decideNext(options.plan, record, now);
  if (next.kind === 'rest') return goToRest(options, record);
  return next.kind === 'trigger' ? save(options, record, next.record, 'triggered') : { outcome: 'idle', record };
}

/** A run with a checkpoint in flight: ticks the shards that must be, then completes it, abandons it or waits. */
async function runInFlight(options: CoordinatorOptions, record: CoordinatorRecord, now: number): Promise<CoordinatorRun> {
  // Each shard record is read once, and read again only for shards that had to be ticked.
  const progress = await progressOfAll(options);
  for (const target of shardsToTick(record, progress, options.shards, now, options.tickAfterMs)) {
    await options.tick(target);
    progress.set(target, await progressOf(options, target));
  }
  const decision = decideInFlight(options.plan, record, progress, options.shards, now);
  if (decision.kind === 'wait') return { outcome: 'waiting', record };
  const { snapshots } = options;
  if (decision.kind === 'complete' && snapshots) {
    // The manifest this one builds on is complete and committed, so it is read beside the confirmation.
    const previous = baseManifest(snapshots, record.completed);
    previous.catch(() => undefined);
    // The manifest's key is fixed, so a stale run must never write it from shard records read
    // after the checkpoint moved on (committed, its deltas dropped). Confirming the record
    // unchanged after those reads makes any write of this manifest, however late it lands,
    // one of the same cut.
    const confirmed = await options.coordinator.get();
    if (confirmed.version !== record.version) return { outcome: 'waiting', record: confirmed };
    await writeCheckpointManifest({ ...options, snapshots }, record, await previous, progress, decision.record.completedWatermarks, now);
  }
  return save(options, record, decision.record, decision.kind === 'complete' ? 'completed' : 'abandoned');
}

/**
 * Checkpoints found the pipeline unchanged, with nothing left to commit: the coordinator rests
 * instead of triggering another (docs/PROTOCOL.md, "At rest"). It records that it rests before
 * it looks at the shards again, and an invocation that took input commits its shard before it
 * looks at the coordinator record: so a shard that moved before that look keeps the
 * coordinator awake, and one that moves after it finds the coordinator resting and calls it.
 */
async function goToRest(options: CoordinatorOptions, record: CoordinatorRecord): Promise<CoordinatorRun> {
  const asleep: CoordinatorRecord = { ...record, asleep: true };
  if (!(await options.coordinator.update(asleep))) return { outcome: 'waiting', record: await options.coordinator.get() };
  return restOrWake(options, { ...asleep, version: asleep.version + 1 });
}

/**
 * A run of a resting coordinator: right after it went to rest, when an invocation that took
 * input called it, or when its schedule runs though it rests (a redeployment turned it on, a
 * crash came before it was turned off). It looks at every shard: unchanged, it turns its
 * schedule off, then reads its record again and turns it on if someone woke it meanwhile;
 * changed, it wakes, turns its schedule on and runs as an awake coordinator does: the input
 * that called it is checkpointed at once.
 */
async function restOrWake(options: CoordinatorOptions, record: CoordinatorRecord): Promise<CoordinatorRun> {
  const { plan, coordinator, schedule } = options;
  const progress = await progressOfAll(options);
  if (restingState(plan, progress, record.completedWatermarks) === record.resting?.state && !hasUncommittedWork(progress, record.committed)) {
    await schedule?.pause();
    if ((await coordinator.get()).asleep) return { outcome: 'asleep', record };
    await schedule?.resume();
    return { outcome: 'waiting', record: await coordinator.get() };
  }
  await wakeCoordinator(coordinator, schedule);
  // Awake now, with its resting state forgotten: this run cannot go to rest again.
  return runCoordinator(options);
}
