import { OutputCommit } from '../api/environment.js';
import type { KafkaSink } from '../api/sink.js';
import type { KafkaClients } from '../kafka/clients.js';
import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import { TransactionLostError } from '../kafka/errors.js';
import { hasStopped, NONE_DROPPED, runtimeProgressOf, shardOf, uncommittedDeltas, uncommittedPending, type DroppedRecords, type PendingDelta, type PendingTransaction, type RuntimeProgress, type ShardFailure, type ShardTarget } from './shard-record.js';
import type { KafkaRecord, OutputRecord } from '../kafka/records.js';
import { transactionKey, type TransactionHandle } from '../kafka/transaction-handle.js';
import type { RecordWriter } from '../kafka/writer.js';
import type { RequestCounts, RequestTally } from './request-counts.js';
import { exactlyOnceSinkOf, transactionalIdPrefixOf } from '../plan/names.js';
import type { Plan, Stage } from '../plan/plan.js';
import { nextCheckpointDueAt, type CoordinatorRecord, type CoordinatorStore, type RollbackRequest } from '../state/coordinator-store.js';
import { deflateJson, ShardFencedError, type ShardClaim, type ShardRef, type ShardStore } from '../state/shard-store.js';
import { commitInEpochOrder } from './epoch-order.js';
import { pendingRollback } from './rollback-requests.js';
import { rollBackShard, type Rollback } from './rollback.js';
import { OutputLimits } from './output-limits.js';
import { mayRestBeforeCommitSeen } from './quiescence.js';
import { batchProgress, coveringCheckpoint, type BatchDelta } from './batch-progress.js';
import {
  DEFAULT_MAX_CATCH_UP_RECORDS,
  keysOfRecords,
  prepareBatch,
  type PreparedBatch,
  type ShardBatch,
  type ShardLog,
  type StageInput,
} from './shard-batch.js';
import { resolveStartingOffset } from './starting-offsets.js';
import type { BadRecordError, StageOutputs } from './stage-executor.js';
import { followedBy, putStateDelta, stateDeltaBody } from '../snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';

/**
 * The boundaries between the rows of the processor's table (docs/PROTOCOL.md, "The processor"),
 * in order: the shard claimed (steps 0 and 1); its changed keys written (2 to 4); lingering
 * transactions aborted (5, and 5a per batch); the outputs written (6); the shard committed (7);
 * per batch, its own transaction committed (8). Fault-injection tests crash the invocation at each.
 */
export const PROCESSOR_STEPS = ['claimed', 'state-written', 'swept', 'output-written', 'committed', 'output-committed'] as const;
export type ProcessorStep = (typeof PROCESSOR_STEPS)[number];

/** The topics a stage writes that it can name before it runs: fixed sink topics, repartition topics, the dead-letter topic. */
function outputTopicsOf(plan: Plan, stage: Stage): string[] {
  const topics = stage.nodes.flatMap((node) => {
    if (node.role === 'sink') return node.transformation.sink.config.serializer.topic ?? [];
    return node.role === 'repartition' ? [node.topic] : [];
  });
  if (plan.badRecordPolicy.kind === 'dead-letter') topics.push(plan.badRecordPolicy.topic);
  return topics;
}

/** The input topic of a stage's shard. */
function topicOf(stage: Stage, shard: ShardRef): string {
  return shard.stage.slice(stage.id.length + 1);
}

/** Steps 0 and 1's outcome: the shard claimed, or its rollback to do instead. */
type ReadAndClaimed =
  | { readonly kind: 'claimed'; readonly claim: ShardClaim; readonly checkpoints: CoordinatorRecord }
  | { readonly kind: 'rollback'; readonly request: RollbackRequest; readonly checkpoints: CoordinatorRecord };

export interface ProcessorOptions {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  /** The caller's Kafka clients: the processor neither opens nor closes them. */
  readonly kafka: KafkaClients;
  /**
   * Where each invocation writes what it changed, for checkpoints' snapshots. Without it,
   * checkpoints commit transactions but keep no snapshot: no restore, no rollback.
   */
  readonly snapshots?: SnapshotStore;
  /** Counts the AWS requests of each batch for its report. */
  readonly requests?: RequestTally;
  /** Processing time. */
  readonly clock?: () => number;
  /** The wall clock, which output timestamps are checked against as the broker does; default Date.now. */
  readonly wallClock?: () => number;
  /**
   * Transactional ids per shard. The invocation holding epoch `e` uses slot `e % size`, so a
   * zombie and its successor never share an id; a slot is reused once its transaction is
   * committed. Default 64.
   */
  readonly transactionPoolSize?: number;
  /** Internal limits: the defaults suit production; the simulation draws small ones, to exercise their edges. */
  readonly limits?: Partial<ProcessorLimits>;
  /** Called at each step boundary; a test throws from it to crash the invocation there. */
  readonly onStep?: (step: ProcessorStep, shard: ShardRef) => void;
  /**
   * Calls the coordinator now, for an invocation that took input while it rests: on AWS an
   * asynchronous invocation of the coordinator function. Without it, a resting coordinator
   * wakes at its schedule's next run.
   */
  readonly callCoordinator?: () => Promise<void>;
}

export interface BatchReport {
  readonly shard: ShardRef;
  readonly recordsIn: number;
  /** Records written to the stage's sinks. */
  readonly recordsOut: number;
  readonly skipped: number;
  readonly filled: number;
  readonly keysRead: number;
  readonly keysWritten: number;
  readonly transaction: TransactionHandle | undefined;
  readonly acknowledged: number;
  /** Records late for their window, or bad and skipped or dead-lettered, in this batch. */
  readonly dropped: DroppedRecords;
  /** AWS requests the batch made (with a request counter): by key and batch, never by record. */
  readonly requests: RequestCounts;
  /** The invocation rolled its shard back instead of processing, as the coordinator record asked. */
  readonly rollback?: Rollback;
  /**
   * The shard has stopped at a record that failed as many times as `BadRecordPolicy.fail`
   * allows: it acknowledges checkpoints and processes nothing until `sluice resume`.
   */
  readonly stopped?: ShardFailure;
}

/** A record failed under `BadRecordPolicy.fail`, and its shard will try it again: the error says how often it may. */
export class FailedAttemptError extends Error {
  override readonly name = 'FailedAttemptError';

  constructor(
    readonly failure: BadRecordError,
    readonly attempt: ShardFailure,
    plan: Pick<Plan, 'badRecordPolicy'>,
  ) {
    const { badRecordPolicy: policy } = plan;
    const maxAttempts = policy.kind === 'fail' ? policy.maxAttempts : Infinity;
    super(
      `${failure.message} Attempt ${attempt.attempts}` +
        (maxAttempts === Infinity
          ? ': the shard retries it for as long as the trigger does.'
          : ` of ${maxAttempts}: after that the shard stops at this record, and \`sluice resume\` starts it again.`),
      { cause: failure },
    );
  }
}

const DEFAULT_POOL_SIZE = 64;
/** How many lingering transactional ids an invocation initialises at once. */
const SWEEP_CONCURRENCY = 16;

/** The processor's internal limits (see {@link ProcessorOptions.limits}). */
export interface ProcessorLimits {
  /** How many lingering transactional ids an invocation initialises at once. */
  readonly sweepConcurrency: number;
  /**
   * The most deltas a shard record holds while no checkpoint commits them (a checkpoint stalled
   * behind a rollback, say): a few hundred bytes each, well inside DynamoDB's 400 KB item.
   */
  readonly maxUncommittedDeltas: number;
  /** The most a tick reads to catch a rolled-back shard up with its log. */
  readonly maxCatchUpRecords: number;
  /**
   * The most a shard record's inline deltas take deflated, as the record stores them
   * (docs/PROTOCOL.md, "Inline deltas"); a delta that does not fit goes to an object of its own.
   * 0 puts every delta in an object.
   */
  readonly maxInlineDeltaBytes: number;
}

/**
 * Every claim and commit rewrites the whole shard record, a write unit per started kilobyte of
 * its deflated progress: full, the inline deltas add about two units to each of a batch's two
 * record writes (half that on average over a checkpoint), where an object costs an S3 PUT, eight
 * units' price, and its share of the merges.
 */
const MAX_INLINE_DELTA_BYTES = 2_048;

const DEFAULT_LIMITS: ProcessorLimits = {
  sweepConcurrency: SWEEP_CONCURRENCY,
  maxUncommittedDeltas: 256,
  maxCatchUpRecords: DEFAULT_MAX_CATCH_UP_RECORDS,
  maxInlineDeltaBytes: MAX_INLINE_DELTA_BYTES,
};
/** How many of its own per-batch commits a container remembers; one forgotten costs a describe of its id. */
const MAX_REMEMBERED_COMMITS = 4_096;

/**
 * The processor function's work for one shard (docs/PROTOCOL.md, "The processor"): state
 * through the shard store, output through the sinks' delivery guarantees — EXACTLY_ONCE into
 * one Kafka transaction per invocation, left pre-committed for the commit function — and
 * the checkpoint acknowledgement, all made durable by the shard's single commit.
 */
export class Processor {
  /** NONE and AT_LEAST_ONCE producers, kept connected across invocations. */
  private readonly writers = new Map<DeliveryGuarantee, RecordWriter>();
  private readonly clock: () => number;
  private readonly poolSize: number;
  private readonly outputLimits: OutputLimits;
  private readonly limits: ProcessorLimits;
  /**
   * With per-batch output commit, the transactions this container committed whose handles
   * its shards' records still hold: the next invocation drops them without asking the broker.
   */
  private readonly committedHere = new Set<string>();

  constructor(private readonly options: ProcessorOptions) {
    this.clock = options.clock ?? Date.now;
    this.poolSize = options.transactionPoolSize ?? DEFAULT_POOL_SIZE;
    this.outputLimits = new OutputLimits(options.kafka.admin, options.wallClock ?? Date.now);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  private stage(stageId: string): Stage {
    const stage = this.options.plan.stages.find((s) => s.id === stageId);
    if (!stage) throw new Error(`Pipeline ${this.options.plan.pipeline} has no ${stageId}`);
    return stage;
  }

  /**
   * Processes one partition's records (possibly none: a coordinator tick), as the rows of
   * PROTOCOL's processor table, each a method below; `onStep` is called at each boundary.
   */
  async processShard(stageId: string, topic: string, partition: number, records: readonly KafkaRecord[]): Promise<BatchReport> {
    const requestsBefore = this.options.requests?.snapshot() ?? {};
    const stage = this.stage(stageId);
    const shard = shardOf(stage, topic, partition);
    const read = await this.readAndClaim(stage, { stageId, topic, partition }, records);
    if (read.kind === 'rollback') return this.rollBack(shard, read.request, read.checkpoints, records, requestsBefore);
    const { claim, checkpoints } = read;
    this.reached('claimed', shard);
    const batch = this.shardBatch(stage, shard, { stageId, topic, partition }, checkpoints);
    const prepared = await prepareBatch(batch, claim, records, this.mayProcess(batch, claim, checkpoints));
    const claimed = runtimeProgressOf(claim.progress);
    const { deltaWritten } = await this.writeState(batch, prepared, claimed, checkpoints);
    this.reached('state-written', shard);
    const triggered = this.checkpointTriggeredSince(checkpoints, claimed.acknowledged);
    const byGuarantee = this.recordsByGuarantee(stage, prepared.outputs);
    const { settled, inOrder } = await this.sweep(batch, claim, checkpoints, byGuarantee);
    this.reached('swept', shard);
    const transaction = await this.writeOutputs(batch, prepared, byGuarantee, claim.epoch);
    const progress = batchProgress({
      shard,
      claimed,
      epoch: claim.epoch,
      committed: checkpoints.committed,
      triggered: await triggered,
      processed: prepared.progress,
      idle: prepared.idle,
      pending: settled,
      transaction,
      delta: await deltaWritten,
    });
    this.reached('output-written', shard);
    await this.commit(claim, progress, transaction);
    this.reached('committed', shard);
    for (const { handle } of claimed.pending) this.committedHere.delete(transactionKey(handle));
    const own = progress.pending.at(-1);
    if (inOrder && transaction && own) {
      await this.commitOwn(own);
      this.reached('output-committed', shard);
    }
    const stopped = await this.afterCommit(prepared, checkpoints, records);
    return {
      shard,
      recordsIn: records.length,
      recordsOut: [...prepared.outputs.sinks.values()].reduce((count, written) => count + written.length, 0),
      skipped: prepared.skipped,
      filled: prepared.filled,
      keysRead: prepared.keysRead,
      keysWritten: prepared.keysWritten,
      dropped: prepared.dropped,
      transaction,
      acknowledged: progress.acknowledged,
      requests: this.options.requests?.since(requestsBefore) ?? {},
      ...(stopped ? { stopped } : {}),
    };
  }

  private reached(step: ProcessorStep, shard: ShardRef): void {
    this.options.onStep?.(step, shard);
  }

  /**
   * Steps 0 and 1: reads the coordinator record, with the claim sent beside it (the coordinator
   * may act between the two in either order, as it could between two requests in a row), and
   * the claim reading the batch's keys beside it (ShardStore.claim). A crash after it leaves a
   * raised epoch, which the next claim records as aborted. When the record requests this
   * shard's rollback, the rollback claims the shard again, and this claim stays uncommitted.
   */
  private async readAndClaim(stage: Stage, target: ShardTarget, records: readonly KafkaRecord[]): Promise<ReadAndClaimed> {
    const { plan, store, coordinator } = this.options;
    const claiming = store.claim(shardOf(stage, target.topic, target.partition), keysOfRecords(plan, stage, records));
    claiming.catch(() => undefined);
    const checkpoints = await coordinator.get();
    const request = pendingRollback(checkpoints, target);
    if (request) {
      await claiming.catch(() => undefined);
      return { kind: 'rollback', request, checkpoints };
    }
    await this.outputLimits.prepare(outputTopicsOf(plan, stage));
    return { kind: 'claimed', claim: await claiming, checkpoints };
  }

  /** What every step of this batch reads: the shard's log, and its stage's watermark as the coordinator record has it. */
  private shardBatch(stage: Stage, shard: ShardRef, { stageId, topic, partition }: ShardTarget, checkpoints: CoordinatorRecord): ShardBatch {
    const { plan, store } = this.options;
    const { reader } = this.options.kafka;
    const log: ShardLog = {
      read: (from, to) => reader.read({ topic, partition, from, to }),
      readAvailable: (from, max) => reader.readAvailable(topic, partition, from, max),
      end: () => reader.logEnd(topic, partition),
      readThrough: async (from, until) => {
        const polled = await reader.readAvailable(topic, partition, from, 1);
        const first = polled.records[0];
        return first ? first.offset >= until : polled.next >= until;
      },
    };
    const { input: stageInput } = stage;
    const input: StageInput =
      stageInput.kind === 'repartition'
        ? {
            kind: 'repartition',
            log,
            inputWatermark: Math.min(...stageInput.upstream.map((id) => checkpoints.committedWatermarks[id] ?? Number.MIN_SAFE_INTEGER)),
            transactional: plan.internalGuarantee === DeliveryGuarantee.EXACTLY_ONCE,
          }
        : {
            kind: 'source',
            log,
            startingOffset: () => {
              const { startingOffsets, groupId } = stageInput.source.source.config;
              return resolveStartingOffset(this.options.kafka.admin, startingOffsets, groupId, topic, partition);
            },
            stageWatermark: checkpoints.activeWatermarks?.[stageId] ?? Number.MIN_SAFE_INTEGER,
          };
    return { plan, stage, store, shard, input, clock: this.clock, maxRecordBytes: (outputTopic) => this.outputLimits.maxRecordBytes(outputTopic), maxCatchUpRecords: this.limits.maxCatchUpRecords };
  }

  /**
   * Whether the claim may process its records. It may not when its transactional id still holds
   * a transaction that waits for a checkpoint, or its record holds as many uncommitted deltas as
   * it may: the checkpoint that would free them could not complete while the shard cannot
   * acknowledge it (docs/PROTOCOL.md, "Slot busy, or record full").
   */
  private mayProcess({ plan, stage, shard }: ShardBatch, claim: ShardClaim, checkpoints: CoordinatorRecord): boolean {
    return (
      uncommittedDeltas(claim.progress, checkpoints.committed).length < this.limits.maxUncommittedDeltas &&
      (plan.internalGuarantee !== DeliveryGuarantee.EXACTLY_ONCE ||
        !uncommittedPending(claim.progress, checkpoints.committed).some(
          (p) => !this.knownCommitted(p) && p.handle.transactionalId === this.transactionalId(stage, shard, claim.epoch),
        ))
    );
  }

  /**
   * Step 4: with a snapshot store, the invocation's delta: held in the shard record when it
   * fits beside the record's other inline deltas (docs/PROTOCOL.md, "Inline deltas"), else
   * an object whose put runs beside the key writes and steps 5 and 6 and is awaited before
   * step 7 (an attempt that fails before that leaves an object no shard record names); writes
   * the changed keys under the claim's epoch. A crash after it leaves invisible values (the
   * visibility rule).
   */
  private async writeState(
    { store, shard }: ShardBatch,
    prepared: PreparedBatch,
    claimed: RuntimeProgress,
    checkpoints: CoordinatorRecord,
  ): Promise<{ deltaWritten: Promise<BatchDelta> | undefined }> {
    const { snapshots } = this.options;
    const { claim, from, changes, outputs } = prepared;
    const producesOutput = [...outputs.sinks.values(), outputs.repartitions, outputs.deadLetters].some((records) => records.length > 0);
    let deltaWritten: Promise<BatchDelta> | undefined;
    if (snapshots && (changes.length > 0 || producesOutput)) {
      const delta = stateDeltaBody({ epoch: claim.epoch, offsetBefore: from, executorBefore: claimed.executor, changes });
      const held = claimed.deltas.filter((d) => d.checkpoint > checkpoints.committed);
      const inlineOf = (deltas: readonly PendingDelta[]) => deltas.flatMap((d) => ('inline' in d ? [d.inline] : []));
      // A batch without output has no transaction for a rollback to go back to: its changes may
      // join the last inline delta of the same checkpoint, so that what the record holds
      // follows the keys a checkpoint changes, not its batches.
      const last = held.at(-1);
      const covering = coveringCheckpoint(claimed.acknowledged, checkpoints.triggered);
      const extended = !producesOutput && last && 'inline' in last && last.checkpoint === covering ? followedBy(last.inline, delta) : undefined;
      const inline = extended ? [...inlineOf(held.slice(0, -1)), extended] : [...inlineOf(held), delta];
      if (deflateJson(JSON.stringify(inline)).length <= this.limits.maxInlineDeltaBytes) {
        deltaWritten = Promise.resolve(extended ? { inline: delta, extended } : { inline: delta });
      } else {
        deltaWritten = putStateDelta(snapshots, shard, delta).then((object) => ({ object }));
        deltaWritten.catch(() => undefined);
      }
    }
    await store.write(claim, changes);
    return { deltaWritten };
  }

  /**
   * Steps 5a and 5: per batch, commits the shard's earlier transactions in epoch order; then
   * aborts what the attempts since the last commit may have left open.
   */
  private async sweep(
    { plan, stage, shard }: ShardBatch,
    claim: ShardClaim,
    checkpoints: CoordinatorRecord,
    byGuarantee: ReadonlyMap<DeliveryGuarantee, OutputRecord[]>,
  ): Promise<{ settled: PendingTransaction[]; inOrder: boolean }> {
    const pending = uncommittedPending(claim.progress, checkpoints.committed);
    // Per batch, this invocation's transaction may only commit after the shard's earlier ones:
    // they are committed (or found lost) first, and this commit records them as committed.
    const { settled, inOrder } =
      plan.checkpointing.outputCommit === OutputCommit.PER_BATCH ? await this.commitEarlier(pending) : { settled: pending, inOrder: false };
    await this.abortLingering(stage, shard, claim, settled.filter((p) => !p.committed), byGuarantee.has(DeliveryGuarantee.EXACTLY_ONCE));
    return { settled, inOrder };
  }

  /**
   * Step 7: commits the shard. Fenced by a newer invocation, nothing records this transaction:
   * it is aborted now rather than left holding back read_committed readers until its timeout.
   */
  private async commit(claim: ShardClaim, progress: RuntimeProgress, transaction: TransactionHandle | undefined): Promise<void> {
    try {
      await this.options.store.commit(claim, progress);
    } catch (error) {
      if (transaction && error instanceof ShardFencedError) await this.options.kafka.committer.abort(transaction).catch(() => undefined);
      throw error;
    }
  }

  /**
   * After the commit: raises a failed attempt under its bound (so that the trigger retries it),
   * and calls a coordinator that may rest. Returns the failure the shard has stopped at.
   */
  private async afterCommit(prepared: PreparedBatch, checkpoints: CoordinatorRecord, records: readonly KafkaRecord[]): Promise<ShardFailure | undefined> {
    const { plan, coordinator } = this.options;
    const stopped = hasStopped(plan, prepared.failure) ? prepared.failure : undefined;
    if (prepared.error && prepared.failure && !stopped) throw new FailedAttemptError(prepared.error, prepared.failure, plan);
    // Read after the shard's commit: a coordinator that went to rest before it looks at this
    // shard again, and one that rests now is called, and finds it (docs/PROTOCOL.md, "At rest").
    if (records.length > 0 && !stopped && mayRestBeforeCommitSeen(checkpoints) && (await coordinator.get()).asleep) {
      await this.options.callCoordinator?.();
    }
    return stopped;
  }

  /**
   * Per-batch output commit, before this invocation writes its own: commits the shard's
   * earlier transactions not known committed — a crashed invocation's, or another
   * container's — in epoch order, and marks those committed. At a lost one it stops, and so
   * does per-batch commit for this invocation: the lost transaction and every later one stay
   * pending for the commit function, which requests the rollback once their checkpoint is
   * complete (a rollback requested while the checkpoint is in flight would move positions
   * that a manifest of it may already hold). `inOrder` says whether every earlier one is committed.
   */
  private async commitEarlier(pending: readonly PendingTransaction[]): Promise<{ settled: PendingTransaction[]; inOrder: boolean }> {
    const { committed, lost } = await commitInEpochOrder(
      this.options.kafka.committer,
      pending.filter((p) => !this.knownCommitted(p)),
    );
    const committedNow = new Set(committed);
    const settled = pending.map((p): PendingTransaction => (this.knownCommitted(p) || committedNow.has(p) ? { ...p, committed: true } : p));
    return { settled, inOrder: lost === undefined };
  }

  private knownCommitted(pending: PendingTransaction): boolean {
    return pending.committed === true || this.committedHere.has(transactionKey(pending.handle));
  }

  /**
   * Per-batch output commit, once the shard's commit has made state, offset and handle
   * durable: the output becomes visible now. If the container dies first, the shard's next
   * invocation commits it, or else the commit function at the next checkpoint; if the broker
   * lost it, the commit function finds that too, and requests the rollback.
   */
  private async commitOwn(own: PendingTransaction): Promise<void> {
    const { lost } = await commitInEpochOrder(this.options.kafka.committer, [own]);
    if (lost) return;
    this.committedHere.add(transactionKey(own.handle));
    // Handles another container dropped never come back here: the oldest go first.
    for (const stale of this.committedHere) {
      if (this.committedHere.size <= MAX_REMEMBERED_COMMITS) break;
      this.committedHere.delete(stale);
    }
  }

  /**
   * Rolls the shard back as the coordinator record requests, instead of processing: the
   * delivered records are read again from the log once it has (docs/PROTOCOL.md, "Rollback").
   */
  private async rollBack(
    shard: ShardRef,
    request: RollbackRequest,
    checkpoints: CoordinatorRecord,
    records: readonly KafkaRecord[],
    requestsBefore: RequestCounts,
  ): Promise<BatchReport> {
    const { plan, store, coordinator, snapshots } = this.options;
    if (!snapshots) throw new Error(`Shard ${shard.stage}/${shard.shard} must be rolled back, which needs the snapshot store: set SLUICE_SNAPSHOT_BUCKET`);
    const rollback = await rollBackShard({ plan, store, coordinator, committer: this.options.kafka.committer, snapshots }, request, checkpoints, this.clock());
    return {
      shard,
      recordsIn: records.length,
      recordsOut: 0,
      skipped: records.length,
      filled: 0,
      keysRead: 0,
      keysWritten: rollback?.keysRestored ?? 0,
      dropped: NONE_DROPPED,
      transaction: undefined,
      acknowledged: checkpoints.triggered,
      requests: this.options.requests?.since(requestsBefore) ?? {},
      ...(rollback ? { rollback } : {}),
    };
  }

  /**
   * The latest checkpoint triggered, for the batch to acknowledge. When the record read at the
   * start shows none in flight and the next due by now, the coordinator may have triggered it
   * while the batch ran: the record is read again, beside the outputs' writes, so that this
   * batch acknowledges it rather than the shard's next one, a batching window later
   * (docs/PROTOCOL.md, step 6). Acknowledging later than the start read is what a batch that
   * started later would do: the claim keeps every other batch of the shard out meanwhile.
   */
  private checkpointTriggeredSince(atStart: CoordinatorRecord, acknowledged: number): Promise<number> {
    const { checkpointing } = this.options.plan;
    const mayTriggerNow =
      atStart.triggered === acknowledged &&
      atStart.triggered === atStart.completed &&
      atStart.asleep !== true &&
      checkpointing.intervalMs > 0 &&
      this.clock() >= nextCheckpointDueAt(atStart, checkpointing);
    if (!mayTriggerNow) return Promise.resolve(atStart.triggered);
    const reading = this.options.coordinator.get().then((latest) => latest.triggered);
    reading.catch(() => undefined);
    return reading;
  }

  /** The stage's outputs by the guarantee they are written with; a guarantee with no record is absent. */
  private recordsByGuarantee(stage: Stage, outputs: StageOutputs): Map<DeliveryGuarantee, OutputRecord[]> {
    const byGuarantee = new Map<DeliveryGuarantee, OutputRecord[]>();
    const add = (guarantee: DeliveryGuarantee, records: readonly OutputRecord[]) => {
      if (records.length > 0) byGuarantee.set(guarantee, [...(byGuarantee.get(guarantee) ?? []), ...records]);
    };
    const sinks = new Map<string, KafkaSink<unknown>>();
    for (const node of stage.nodes) if (node.role === 'sink') sinks.set(node.name, node.transformation.sink);
    for (const [name, records] of outputs.sinks) add(sinks.get(name)?.config.deliveryGuarantee ?? DeliveryGuarantee.NONE, records);
    add(this.options.plan.internalGuarantee, [...outputs.repartitions, ...outputs.deadLetters]);
    return byGuarantee;
  }

  /**
   * Step 6: writes the outputs by guarantee: NONE and AT_LEAST_ONCE through the producer,
   * EXACTLY_ONCE into one transaction, pre-committed. A crash after it leaves outputs that no
   * shard record names: the retry writes AT_LEAST_ONCE ones again, and its step 5 aborts the
   * transaction.
   */
  private async writeOutputs(
    { stage, shard }: ShardBatch,
    prepared: PreparedBatch,
    byGuarantee: ReadonlyMap<DeliveryGuarantee, OutputRecord[]>,
    epoch: number,
  ): Promise<TransactionHandle | undefined> {
    const { outputs, from } = prepared;
    await this.outputLimits.checkTimestamps([...[...outputs.sinks.values()].flat(), ...outputs.deadLetters], `${stage.id}'s batch of ${topicOf(stage, shard)}/${shard.shard} from offset ${from}`);
    try {
      return await this.writeByGuarantee(stage, shard, byGuarantee, epoch);
    } catch (error) {
      // A newer invocation's recovery initialised this attempt's transactional id: nothing
      // records the transaction yet, so this is fencing of the attempt, not a loss.
      if (error instanceof TransactionLostError && (await this.options.store.peek(shard))?.epoch !== epoch) throw new ShardFencedError(shard, epoch);
      throw error;
    }
  }

  /** Sends each output by its guarantee; returns the EXACTLY_ONCE transaction, pre-committed. */
  private async writeByGuarantee(
    stage: Stage,
    shard: ShardRef,
    byGuarantee: ReadonlyMap<DeliveryGuarantee, OutputRecord[]>,
    epoch: number,
  ): Promise<TransactionHandle | undefined> {
    for (const guarantee of [DeliveryGuarantee.NONE, DeliveryGuarantee.AT_LEAST_ONCE] as const) {
      const records = byGuarantee.get(guarantee);
      if (!records) continue;
      const writer = this.writers.get(guarantee) ?? this.options.kafka.recordWriter(guarantee);
      this.writers.set(guarantee, writer);
      try {
        await writer.write(records);
        await writer.flush();
      } catch (error) {
        // A failed producer is not reused: the next invocation connects afresh.
        this.writers.delete(guarantee);
        await writer.close().catch(() => undefined);
        throw error;
      }
    }
    const transactional = byGuarantee.get(DeliveryGuarantee.EXACTLY_ONCE);
    if (!transactional) return undefined;

    const transactionalId = this.transactionalId(stage, shard, epoch);
    const writer = await this.options.kafka.beginTransaction({ transactionalId, transactionTimeoutMs: this.transactionTimeoutMs(stage) });
    // Ownership is checked after the id is initialised and before anything is written: if a
    // successor has claimed the shard since, this attempt stops with nothing open; if not, the
    // successor's claim and its sweep of lingering transactions come after the initialisation,
    // so whatever this attempt writes from now on is aborted by that sweep at the latest.
    if ((await this.options.store.peek(shard))?.epoch !== epoch) {
      await writer.close();
      throw new ShardFencedError(shard, epoch);
    }
    try {
      await writer.write(transactional);
      return await writer.preCommit();
    } finally {
      await writer.close();
    }
  }

  private transactionTimeoutMs(stage: Stage): number {
    return exactlyOnceSinkOf(stage)?.config.transactionTimeoutMs ?? 900_000;
  }

  /** `<prefix>[-<deployment stage>]-<stage>-<topic>-<partition>-<slot>` (docs/PROTOCOL.md, "Transactional ids"). */
  private transactionalId(stage: Stage, shard: ShardRef, epoch: number): string {
    return `${transactionalIdPrefixOf(this.options.plan, stage)}-${topicOf(stage, shard)}-${shard.shard}-${epoch % this.poolSize}`;
  }

  /**
   * Step 5: aborts what the attempts since the last commit may have left open — each used the
   * slot of its epoch, and initialising that id aborts its transaction (invariant 5). A
   * zombie's transaction is covered too: it initialises its id before it checks that it still
   * owns the shard, so its successor's claim, and this sweep, come after that initialisation.
   * The attempts of the last pool size epochs cover the whole pool but this epoch's own slot,
   * which its transaction initialises; without one, an attempt `pool` epochs back may have left
   * that slot open, and it is swept too (found by the simulation: a tick's commit moved the last
   * committed epoch past such an attempt, and nothing swept its slot again).
   */
  private async abortLingering(
    stage: Stage,
    shard: ShardRef,
    claim: ShardClaim,
    pending: readonly PendingTransaction[],
    initialisesOwnSlot: boolean,
  ): Promise<void> {
    if (this.options.plan.internalGuarantee !== DeliveryGuarantee.EXACTLY_ONCE) return;
    const from = Math.max(claim.committedEpoch + 1, claim.epoch - this.poolSize + 1);
    const failedIds = new Set<string>();
    for (let failed = from; failed < claim.epoch; failed++) failedIds.add(this.transactionalId(stage, shard, failed));
    if (!initialisesOwnSlot && claim.epoch - this.poolSize > claim.committedEpoch) failedIds.add(this.transactionalId(stage, shard, claim.epoch));
    let stillPending = pending;
    if (stillPending.some((p) => failedIds.has(p.handle.transactionalId))) {
      // A failed attempt reused a pending transaction's slot if its coordinator record showed
      // that transaction's checkpoint committed, and it may have read a fresher record than
      // this invocation's (read before a stall). A record read now, after this claim, shows at
      // least what it saw: skipping the slot on the older one left the failed attempt's
      // transaction open until its timeout (found by the simulation, seed 2434).
      const { committed } = await this.options.coordinator.get();
      stillPending = pending.filter((p) => p.checkpoint > committed);
    }
    const lingering = [...failedIds].filter((id) => !stillPending.some((p) => p.handle.transactionalId === id));
    await this.initialise(stage, lingering);
  }

  /**
   * Initialises every transactional id of a shard's pool, which aborts whatever any attempt
   * left open, a zombie's too. A restore does it after it claims the shard: its commit moves
   * the shard's last committed epoch past the attempts that the next invocation would sweep.
   */
  async abortTransactionsOf({ stageId, topic, partition }: ShardTarget): Promise<void> {
    if (this.options.plan.internalGuarantee !== DeliveryGuarantee.EXACTLY_ONCE) return;
    const stage = this.stage(stageId);
    const shard = shardOf(stage, topic, partition);
    await this.initialise(
      stage,
      Array.from({ length: this.poolSize }, (_, slot) => this.transactionalId(stage, shard, slot)),
    );
  }

  /**
   * A few at a time, not one after another: after a run of failed attempts the sweep covers
   * most of the pool, and swept one by one it outlasted the coordinator's next tick, which
   * fenced it, so that no attempt ever committed (found by the simulation).
   */
  private async initialise(stage: Stage, transactionalIds: readonly string[]): Promise<void> {
    const { sweepConcurrency } = this.limits;
    for (let start = 0; start < transactionalIds.length; start += sweepConcurrency) {
      await Promise.all(
        transactionalIds.slice(start, start + sweepConcurrency).map(async (transactionalId) => {
          const writer = await this.options.kafka.beginTransaction({ transactionalId, transactionTimeoutMs: this.transactionTimeoutMs(stage) });
          await writer.close();
        }),
      );
    }
  }

  /** Closes the producers it opened; the Kafka clients stay the caller's. */
  async close(): Promise<void> {
    for (const writer of this.writers.values()) await writer.close();
    this.writers.clear();
  }
}
