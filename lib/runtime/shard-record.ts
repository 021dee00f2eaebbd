// The shard record (docs/PROTOCOL.md, "Shard record"): what a shard's commit records besides its
// keyed state, how a shard is addressed, and the reads every actor makes of it. A leaf of
// lib/runtime: the processor, the coordinator, the commit function and the rollback all read
// the record, and none of them is imported here.
import type { TopicAdmin } from '../kafka/clients.js';
import type { TransactionHandle } from '../kafka/transaction-handle.js';
import type { Plan, Stage } from '../plan/plan.js';
import type { StateDelta, StateSource } from '../snapshot/checkpoint-state.js';
import type { ShardRef } from '../state/shard-store.js';
import type { ExecutorSnapshot } from './stage-executor.js';

/** What a shard's commit records besides its keyed state (docs/PROTOCOL.md, shard record). */
export interface ShardProgress {
  /** The next input offset to process; null before the first batch. */
  readonly offset: number | null;
  readonly executor: ExecutorSnapshot | null;
  /**
   * Set by a rollback: the shard is behind its log and ticks read what the log holds until it
   * has caught up. (Otherwise ticks read nothing: a tick that read the backlog would contend
   * with the trigger's own invocations for the shard.)
   */
  readonly catchUp?: boolean;
  /**
   * A repartition stage's input watermark that waits until the shard has read its partition
   * up to `until`, the end offset when the watermark was offered (see {@link inputWatermarkOf}).
   */
  readonly heldInputWatermark?: { readonly watermark: number; readonly until: number };
  /** Records the shard has dropped since it started, counted at each batch's commit. */
  readonly dropped?: DroppedRecords;
  /** The record that failed the shard's latest attempts, under `BadRecordPolicy.fail`; cleared once a batch gets past it. */
  readonly failure?: ShardFailure;
}

/** A record that fails under `BadRecordPolicy.fail`: where, how often and why. */
export interface ShardFailure {
  /** The failing record's offset in the shard's input. */
  readonly offset: number;
  /** Attempts in a row that failed at this record. */
  readonly attempts: number;
  /** The error as logs may show it: the record's position and what to do, without its contents unless the pipeline allows them. */
  readonly reason: string;
  /** Processing time of the first and of the latest failed attempt. */
  readonly firstFailedAt: number;
  readonly lastFailedAt: number;
}

/**
 * Whether a shard has used up its attempts at a failing record: it stops retrying, and only
 * acknowledges checkpoints, until `sluice resume` (or a policy with more attempts) lets it try again.
 */
export function hasStopped(plan: Pick<Plan, 'badRecordPolicy'>, failure: ShardFailure | undefined): failure is ShardFailure {
  const policy = plan.badRecordPolicy;
  return failure !== undefined && policy.kind === 'fail' && failure.attempts >= policy.maxAttempts;
}

/** Records a shard did not pass on: late for their window, or bad and skipped or dead-lettered. */
export interface DroppedRecords {
  readonly late: number;
  readonly skipped: number;
  readonly deadLettered: number;
}

export const NONE_DROPPED: DroppedRecords = { late: 0, skipped: 0, deadLettered: 0 };

export const INITIAL_PROGRESS: ShardProgress = { offset: null, executor: null };

/** A pre-committed transaction and the checkpoint whose completion commits it. */
export interface PendingTransaction {
  readonly handle: TransactionHandle;
  readonly checkpoint: number;
  /** The epoch of the invocation that wrote it. */
  readonly epoch: number;
  /**
   * Known committed (per-batch output commit): nothing is left to do for it, and its slot is
   * free. It stays in the record until its checkpoint commits, as the checkpoint's manifest names it.
   */
  readonly committed?: true;
}

/**
 * A committed invocation's state delta, and the checkpoint that covers it: an object in the
 * snapshot store, or, when small, held in the record itself until a checkpoint's manifest
 * writes it out (docs/PROTOCOL.md, "Inline deltas").
 */
export type PendingDelta = { readonly epoch: number; readonly checkpoint: number } & DeltaRef;

/** Where an invocation's state delta is: its object's key, or the delta itself. */
export type DeltaRef = { readonly object: string } | { readonly inline: StateDelta };

/** The delta as a part of the shard's state chain. */
export function deltaSource(delta: DeltaRef): StateSource {
  return 'object' in delta ? delta.object : delta.inline;
}

/** Where the shard stood when it acknowledged a checkpoint: the checkpoint's manifest records it. */
export interface CheckpointPosition {
  readonly checkpoint: number;
  readonly offset: number | null;
  readonly executor: ExecutorSnapshot | null;
}

/** What the processor records in a shard's commit (docs/PROTOCOL.md, `progress`). */
export interface RuntimeProgress extends ShardProgress {
  readonly pending: readonly PendingTransaction[];
  /** The highest checkpoint this shard acknowledged. */
  readonly acknowledged: number;
  /** The stage watermark when the shard acknowledged it: all output below it is covered. */
  readonly acknowledgedWatermark: number;
  /** The shard was idle when it acknowledged: its watermark does not hold its stage's back. */
  readonly acknowledgedIdle?: boolean;
  /**
   * An idle shard's earliest event-time timer when it acknowledged: its stage's watermark
   * stays below it until the shard, following the stage, has fired it.
   */
  readonly acknowledgedNextTimer?: number;
  /** State deltas not yet covered by a committed checkpoint (with a snapshot store). */
  readonly deltas: readonly PendingDelta[];
  /** The shard's position at its latest acknowledgement. */
  readonly position: CheckpointPosition | null;
}

/** The shard's pre-committed transactions that no committed checkpoint has covered yet. */
export function uncommittedPending(progress: unknown, committed: number): PendingTransaction[] {
  return runtimeProgressOf(progress).pending.filter((p) => p.checkpoint > committed);
}

/** The shard's state deltas that no committed checkpoint has covered yet. */
export function uncommittedDeltas(progress: unknown, committed: number): PendingDelta[] {
  return runtimeProgressOf(progress).deltas.filter((d) => d.checkpoint > committed);
}

/** The shard of a stage's input partition. Sources may read several topics, so the topic is part of it. */
export function shardOf(stage: Stage, topic: string, partition: number): ShardRef {
  return { stage: `${stage.id}/${topic}`, shard: partition };
}

function initialProgress(): RuntimeProgress {
  return {
    offset: null,
    executor: null,
    pending: [],
    acknowledged: 0,
    acknowledgedWatermark: Number.MIN_SAFE_INTEGER,
    deltas: [],
    position: null,
  };
}

/** A shard's progress as its record holds it, with the fields older records lack filled in. */
export function runtimeProgressOf(progress: unknown): RuntimeProgress {
  return { ...initialProgress(), ...(progress as Partial<RuntimeProgress> | undefined) };
}

/** One shard of the pipeline: a partition of a stage's input topic. */
export interface ShardTarget {
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
}

/** Every shard of every stage, from the input topics' partition counts. */
export async function listShards(plan: Plan, admin: TopicAdmin): Promise<ShardTarget[]> {
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

export function shardRefOf(plan: Plan, target: ShardTarget): ShardRef {
  const stage = plan.stages.find((s) => s.id === target.stageId);
  if (!stage) throw new Error(`Pipeline ${plan.pipeline} has no ${target.stageId}`);
  return shardOf(stage, target.topic, target.partition);
}
