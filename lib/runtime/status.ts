import type { TransactionDescription } from '../kafka/describe-transactions.js';
import type { RecordPosition, TransactionHandle } from '../kafka/transaction-handle.js';
import type { CoordinatorRecord } from '../state/coordinator-store.js';
import { shardRefOf } from './shard-record.js';
import { runtimeProgressOf } from './shard-record.js';
import { hasStopped, NONE_DROPPED, type DroppedRecords, type ShardFailure } from './shard-record.js';
import type { CommittedReader, TopicAdmin, TransactionCommitter } from '../kafka/clients.js';
import type { Plan } from '../plan/plan.js';
import type { CoordinatorStore } from '../state/coordinator-store.js';
import type { ShardStore } from '../state/shard-store.js';
import type { ShardTarget } from './shard-record.js';
import { checkpointManifestKey, readManifest } from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';

/**
 * A pending transaction as the broker sees it: `open` (waiting for its checkpoint),
 * `committed`, or `lost` — aborted by its timeout or by a newer use of its id; the commit
 * function rolls its shard back (docs/PROTOCOL.md, "Rollback").
 */
export type TransactionState = 'open' | 'committed' | 'lost';

export interface ShardStatus {
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
  /** The next offset to process; null before the shard's first batch. */
  readonly offset: number | null;
  readonly logEnd: number;
  /**
   * Committed records after `offset`: counted up to {@link COUNTED_LAG}, so that transaction
   * markers and aborted records, which take offsets too, leave a caught-up shard at 0; beyond
   * that, the offsets left.
   */
  readonly lag: number;
  readonly acknowledged: number;
  /** Records dropped since the shard started: late for their window, bad and skipped, bad and dead-lettered. */
  readonly dropped: DroppedRecords;
  readonly epoch: number;
  readonly transactions: readonly { readonly transactionalId: string; readonly checkpoint: number; readonly state: TransactionState }[];
  /** The record the shard's latest attempts failed at, under `BadRecordPolicy.fail`. */
  readonly failure?: ShardFailure & {
    /** It has failed as often as the policy allows: the shard waits for `sluice resume`. */
    readonly stopped: boolean;
  };
}

/**
 * Output of the latest committed checkpoint that its partition's log no longer holds: the
 * log starts past it, so retention (or a deleteRecords) removed committed output, perhaps
 * before every consumer read it.
 */
export interface DeletedOutput {
  readonly checkpoint: number;
  /** When the checkpoint's manifest was written. */
  readonly checkpointAt: number;
  readonly topic: string;
  readonly partition: number;
  /** The latest record there that one of the checkpoint's transactions wrote first. */
  readonly offset: number;
  readonly logStart: number;
}

export interface PipelineStatus {
  readonly pipeline: string;
  readonly checkpoints: Pick<CoordinatorRecord, 'triggered' | 'triggeredAt' | 'completed' | 'completedAt' | 'committed'>;
  readonly shards: readonly ShardStatus[];
  readonly deletedOutput: readonly DeletedOutput[];
  /** The coordinator rests: nothing to do, no function runs, until input comes. */
  readonly resting: boolean;
}

function stateOf(handle: TransactionHandle, description: TransactionDescription | undefined): TransactionState {
  if (!description || description.producerId !== handle.producerId || description.producerEpoch !== handle.producerEpoch) return 'lost';
  if (description.state === 'CompleteCommit' || description.state === 'PrepareCommit') return 'committed';
  return description.state === 'Ongoing' ? 'open' : 'lost';
}

/** What the status reads: a pipeline's plan, stores and Kafka clients (a PipelineRuntime has them). */
export interface StatusSources {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly admin: TopicAdmin;
  readonly committer: TransactionCommitter;
  readonly reader: CommittedReader;
  /** Where the checkpoint manifests are; without it, deleted output is not looked for. */
  readonly snapshots?: SnapshotStore | undefined;
  shards(): Promise<ShardTarget[]>;
}

/** Up to this many offsets behind, the lag is counted in committed records rather than offsets. */
export const COUNTED_LAG = 1_000;

/** A shard's lag: see {@link ShardStatus.lag}. */
export async function committedLag(reader: CommittedReader, target: ShardTarget, offset: number, logEnd: number): Promise<number> {
  const behind = Math.max(0, logEnd - offset);
  if (behind === 0 || behind > COUNTED_LAG) return behind;
  const { records } = await reader.readAvailable(target.topic, target.partition, offset, COUNTED_LAG);
  return records.length;
}

export async function pipelineStatus(runtime: StatusSources): Promise<PipelineStatus> {
  const { plan, store, committer } = runtime;
  const record = await runtime.coordinator.get();
  const targets = await runtime.shards();
  const topics = await runtime.admin.describeTopics([...new Set(targets.map((t) => t.topic))]);
  const shards: ShardStatus[] = [];
  for (const target of targets) {
    const shardRecord = await store.peek(shardRefOf(plan, target));
    const progress = runtimeProgressOf(shardRecord?.progress);
    const logEnd = Number(topics.find((t) => t.topic === target.topic)?.partitions.find((p) => p.partition === target.partition)?.stable ?? 0);
    const transactions = [];
    for (const { handle, checkpoint } of progress.pending) {
      transactions.push({ transactionalId: handle.transactionalId, checkpoint, state: stateOf(handle, await committer.describe(handle.transactionalId)) });
    }
    shards.push({
      ...target,
      offset: progress.offset,
      logEnd,
      lag: await committedLag(runtime.reader, target, progress.offset ?? 0, logEnd),
      acknowledged: progress.acknowledged,
      dropped: progress.dropped ?? NONE_DROPPED,
      epoch: shardRecord?.epoch ?? 0,
      transactions,
      ...(progress.failure ? { failure: { ...progress.failure, stopped: hasStopped(plan, progress.failure) } } : {}),
    });
  }
  const { triggered, triggeredAt, completed, completedAt, committed } = record;
  return {
    pipeline: plan.pipeline,
    checkpoints: { triggered, triggeredAt, completed, completedAt, committed },
    shards,
    deletedOutput: await deletedOutput(runtime, committed),
    resting: record.asleep === true,
  };
}

/** The latest committed checkpoint's output positions that lie below their partition's log start. */
async function deletedOutput({ snapshots, admin }: StatusSources, committed: number): Promise<DeletedOutput[]> {
  if (!snapshots || committed <= 0) return [];
  const manifest = await readManifest(snapshots, checkpointManifestKey(committed));
  if (!manifest) return [];
  const written = manifest.shards.flatMap((shard) => shard.transactions.flatMap((handle) => (handle.firstRecord ? [handle.firstRecord] : [])));
  if (written.length === 0) return [];
  // One position per partition: the latest the checkpoint's transactions wrote first.
  const latest = new Map<string, RecordPosition>();
  for (const position of written) {
    const key = `${position.topic}\0${position.partition}`;
    if ((latest.get(key)?.offset ?? -1) < position.offset) latest.set(key, position);
  }
  const topics = await admin.describeTopics([...new Set(written.map((position) => position.topic))]);
  return [...latest.values()].flatMap(({ topic, partition, offset }) => {
    const low = topics.find((t) => t.topic === topic)?.partitions.find((p) => p.partition === partition)?.low;
    const logStart = Number(low ?? 0);
    return logStart > offset ? [{ checkpoint: committed, checkpointAt: manifest.createdAt, topic, partition, offset, logStart }] : [];
  });
}

export function formatStatus(status: PipelineStatus): string {
  const { triggered, completed, committed, completedAt } = status.checkpoints;
  const lines = [
    `Pipeline ${status.pipeline}`,
    `Checkpoints: triggered ${triggered}, completed ${completed}${completedAt ? ` (${new Date(completedAt).toISOString()})` : ''}, committed ${committed}` +
      (status.resting ? '; at rest: no input and nothing pending, so no function runs until input comes' : ''),
    '',
    `${'shard'.padEnd(48)} ${'offset'.padStart(10)} ${'lag'.padStart(8)} ${'ack'.padStart(5)} ${'late'.padStart(7)} ${'bad'.padStart(7)} transactions`,
  ];
  for (const shard of status.shards) {
    const byState = (state: TransactionState) => shard.transactions.filter((t) => t.state === state).length;
    const transactions = `${byState('open')} open, ${byState('committed')} committed, ${byState('lost')} lost`;
    lines.push(
      `${`${shard.stageId} ${shard.topic}/${shard.partition}`.padEnd(48)} ${String(shard.offset ?? '-').padStart(10)} ` +
        `${String(shard.lag).padStart(8)} ${String(shard.acknowledged).padStart(5)} ${String(shard.dropped.late).padStart(7)} ` +
        `${String(shard.dropped.skipped + shard.dropped.deadLettered).padStart(7)} ${transactions}`,
    );
  }
  const failing = status.shards.filter((shard) => shard.failure);
  if (failing.length > 0) {
    lines.push('', 'Shards failing at a record (BadRecordPolicy.fail):');
    for (const { stageId, topic, partition, failure } of failing) {
      if (!failure) continue;
      lines.push(
        `  ${stageId} ${topic}/${partition}: ${failure.stopped ? 'STOPPED' : 'retrying'} at offset ${failure.offset} after ` +
          `${failure.attempts} attempts since ${new Date(failure.firstFailedAt).toISOString()}: ${failure.reason}`,
      );
    }
    if (failing.some((shard) => shard.failure?.stopped)) {
      lines.push('  A stopped shard acknowledges checkpoints but processes nothing. Fix the record or the function, deploy, then run sluice resume.');
    }
  }
  if (status.deletedOutput.length > 0) {
    lines.push('', 'Committed output deleted from the log (consumers that had not read it have lost it):');
    for (const deleted of status.deletedOutput) {
      lines.push(
        `  ${deleted.topic}/${deleted.partition}: checkpoint ${deleted.checkpoint} (${new Date(deleted.checkpointAt).toISOString()}) wrote offset ` +
          `${deleted.offset}, and the log now starts at ${deleted.logStart}.`,
      );
    }
    lines.push(
      '  The topic deletes records by their timestamp (retention.ms) or its size (retention.bytes). Raise its retention, or stamp ' +
        'output with the time it is written (setRecordTimestamp(RecordTimestamp.WRITE_TIME)) so that old event times are not deleted at once.',
    );
  }
  return `${lines.join('\n')}\n`;
}
