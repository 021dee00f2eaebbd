import { BROADCAST_KEY } from '../api/transformations.js';
import type { KafkaRecord } from '../kafka/records.js';
import type { Plan, Stage } from '../plan/plan.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import { KeyStateTooLargeError, MAX_KEY_STATE_BYTES, oversizedKeyState, type ShardClaim, type ShardRef, type ShardStore, type StateChange } from '../state/shard-store.js';
import { BatchStateBackend } from './batch-state.js';
import { prepareFormats } from './formats.js';
import { BadRecordError, emissionSegments, emptyStageOutputs, StageExecutor, type StageOutputs } from './stage-executor.js';
import { hasStopped, INITIAL_PROGRESS, NONE_DROPPED, type DroppedRecords, type ShardFailure, type ShardProgress } from './shard-record.js';

/** The failure after one more failed attempt at `error`'s record. */
function failedAgain(previous: ShardFailure | undefined, error: BadRecordError, now: number): ShardFailure {
  const again = previous?.offset === error.record.offset;
  return {
    offset: error.record.offset,
    attempts: again ? previous.attempts + 1 : 1,
    reason: error.message,
    firstFailedAt: again ? previous.firstFailedAt : now,
    lastFailedAt: now,
  };
}

function droppedBy(metrics: Readonly<Record<string, number>>): DroppedRecords {
  return { late: metrics.lateRecordsDropped ?? 0, skipped: metrics.badRecordsSkipped ?? 0, deadLettered: metrics.badRecordsDeadLettered ?? 0 };
}

function sum(a: DroppedRecords, b: DroppedRecords): DroppedRecords {
  return { late: a.late + b.late, skipped: a.skipped + b.skipped, deadLettered: a.deadLettered + b.deadLettered };
}

/**
 * The partition a shard reads, as the processor's Kafka reader sees it (read_committed). The
 * records Lambda delivered are only where a batch starts: a gap, a catch-up, a reread of
 * transactional input and a backlog check read the log itself.
 */
export interface ShardLog {
  /** The committed records at offsets [from, to). */
  read(from: number, to: number): Promise<KafkaRecord[]>;
  /** Up to `max` committed records from `from`, and the offset after what the read covered. */
  readAvailable(from: number, max: number): Promise<{ records: KafkaRecord[]; next: number }>;
  /**
   * The partition's log end offset now, past the records of open transactions: the last
   * stable offset would stop before an open transaction that began ahead of committed records.
   */
  end(): Promise<number>;
  /** Whether, from `from`, everything committed below `until` has been read: nothing committed is left there, and no open transaction holds it back. */
  readThrough(from: number, until: number): Promise<boolean>;
}

/** A shard of a stage that reads a source topic. */
export interface SourceInput {
  readonly kind: 'source';
  readonly log: ShardLog;
  /** Where a shard that never committed starts: the offset its source's OffsetsInitializer names. */
  startingOffset(): Promise<number>;
  /**
   * The stage's watermark over its active shards at the last completed checkpoint. An idle
   * shard follows it, so that its windows and timers fire as the other partitions move on, as
   * they do after a keyBy in Flink, whose operators see the minimum over the active splits.
   */
  readonly stageWatermark: number;
}

/** A shard of a stage that reads a repartition topic, from offset 0. */
export interface RepartitionInput {
  readonly kind: 'repartition';
  readonly log: ShardLog;
  /** The watermark of the stages that write the topic, as of their last committed checkpoint (whose output is all visible by now). */
  readonly inputWatermark: number;
  /**
   * Whether the topic is written in transactions: the delivered range is then read again with
   * read_committed, since whether Lambda's poller reads read_committed is undocumented, so its
   * records are only a hint of which offsets to read.
   */
  readonly transactional: boolean;
}

export type StageInput = SourceInput | RepartitionInput;

/** One batch of one shard: what every step of it reads. */
export interface ShardBatch {
  readonly plan: Plan;
  readonly stage: Stage;
  readonly store: ShardStore;
  readonly shard: ShardRef;
  readonly input: StageInput;
  /** Processing time. */
  readonly clock: () => number;
  /** The largest record each output topic takes (see {@link StageExecutorOptions.maxRecordBytes}); default the executor's. */
  readonly maxRecordBytes?: (topic: string) => number;
  /** The most a catch-up tick reads ({@link ShardProgress.catchUp}). */
  readonly maxCatchUpRecords: number;
}

/** The most a tick reads to catch a rolled-back shard up with its log, unless the processor's limits say otherwise. */
export const DEFAULT_MAX_CATCH_UP_RECORDS = 10_000;

/** Step 2's result: where the batch starts, and the records it processes. */
export interface AlignedInput {
  /** The offset the batch starts at: the shard's previous offset, or where its input starts. */
  readonly from: number;
  /** The records to process, in offset order, from `from` on. */
  readonly records: readonly KafkaRecord[];
  /** How many records Lambda delivered. */
  readonly delivered: number;
  /** Records dropped as already processed (redelivery). */
  readonly skipped: number;
  /** Records read from the log: a gap, a reread of transactional input, a catch-up. */
  readonly filled: number;
  /** The offset after the batch. */
  readonly next: number;
  /** The shard is still behind its log after this batch ({@link ShardProgress.catchUp}). */
  readonly catchUp: boolean;
}

/** A processed batch, its keyed state not yet written: write it, then commit it after its output is safe. */
export interface PreparedBatch {
  readonly claim: ShardClaim;
  readonly outputs: StageOutputs;
  readonly progress: ShardProgress;
  /** The offset the batch started at: the shard's previous offset, or its starting offset. */
  readonly from: number;
  /** The keyed state the batch changed, to write under the claim's epoch. */
  readonly changes: readonly StateChange[];
  /** Records dropped as already processed (redelivery). */
  readonly skipped: number;
  /** Records read to fill a gap. */
  readonly filled: number;
  readonly keysRead: number;
  readonly keysWritten: number;
  /** Every source partition of the shard is idle ({@link StageExecutor.isIdle}). */
  readonly idle: boolean;
  /** What this batch dropped. */
  readonly dropped: DroppedRecords;
  /** The shard's failure, when this batch failed at a record or the shard has stopped at one ({@link hasStopped}). */
  readonly failure?: ShardFailure;
  /** This batch's failure under `BadRecordPolicy.fail`, to raise once its attempt is committed. */
  readonly error?: BadRecordError;
}

/** The progress a claim holds: the shard's last commit, or a shard's start. */
export function claimedProgress(claim: ShardClaim): ShardProgress {
  return (claim.progress as ShardProgress | undefined) ?? INITIAL_PROGRESS;
}

/** Where the shard's next batch starts: after its last committed one, or where its input starts. */
async function startOf(batch: Pick<ShardBatch, 'input'>, progress: ShardProgress): Promise<number> {
  if (progress.offset !== null) return progress.offset;
  return batch.input.kind === 'source' ? batch.input.startingOffset() : 0;
}

/**
 * A batch that processes nothing and only acknowledges, at the shard's unchanged position: its
 * slot is busy or its record full, it failed at a record, or the shard has stopped. The shard
 * catches up on its records afterwards ({@link ShardProgress.catchUp}), since the trigger moves
 * on past them.
 */
function acknowledgeOnly(claim: ShardClaim, from: number, delivered: number, failed: Pick<PreparedBatch, 'failure' | 'error'> = {}): PreparedBatch {
  return {
    claim,
    outputs: emptyStageOutputs(),
    progress: { ...claimedProgress(claim), offset: from, catchUp: true, ...(failed.failure ? { failure: failed.failure } : {}) },
    from,
    changes: [],
    skipped: delivered,
    filled: 0,
    keysRead: 0,
    keysWritten: 0,
    idle: false,
    dropped: NONE_DROPPED,
    ...failed,
  };
}

/**
 * The input watermark a repartition stage may apply now. The upstream stages' watermark at
 * their last committed checkpoint covers output that is all committed — but a committed record
 * may still be unreadable behind an open transaction of a later checkpoint, at any offset below
 * the partition's end. So the watermark is held until the shard has read through the end
 * offset seen when it was offered (read after the coordinator record), then applied; one is
 * held at a time, so the shard's watermark trails its upstream's by a checkpoint or so.
 */
async function inputWatermarkOf(
  input: RepartitionInput,
  held: ShardProgress['heldInputWatermark'],
  next: number,
  current: number,
): Promise<{ applied: number; held: ShardProgress['heldInputWatermark'] }> {
  const offered = input.inputWatermark;
  const { log } = input;
  let applied = Number.MIN_SAFE_INTEGER;
  let waiting = held;
  if (waiting && (await log.readThrough(next, waiting.until))) {
    applied = waiting.watermark;
    waiting = undefined;
  }
  if (!waiting && offered > Math.max(applied, current)) {
    const until = await log.end();
    if (await log.readThrough(next, until)) applied = offered;
    else waiting = { watermark: offered, until };
  }
  return { applied, held: waiting };
}

/** Text JSON.parse could read as a value other than a string: an object, array, number, true, false or null. */
const NON_STRING_JSON = /^\s*[[{\-0-9tfn]/;

/**
 * The keys the batch's record keys may stand for: each distinct key's text, and the JSON value
 * it spells when that is not a string. Parsing is tried only where it can succeed: a thrown
 * SyntaxError per record cost more than the rest of the key handling.
 */
function candidateKeys(records: readonly KafkaRecord[], maxParallelism: number): KeyRef[] {
  const texts = new Set<string>();
  for (const record of records) if (record.key !== null) texts.add(record.key.toString('utf8'));
  return [...texts].flatMap((text) => keysOfText(text, maxParallelism));
}

function keysOfText(text: string, maxParallelism: number): KeyRef[] {
  const keys = [keyRef(text, maxParallelism)];
  if (!NON_STRING_JSON.test(text)) return keys;
  try {
    keys.push(keyRef(JSON.parse(text) as unknown, maxParallelism));
  } catch {
    // Not JSON after all: the key is the text itself.
  }
  return keys;
}

/**
 * The keys whose state a batch of `records` loads before it runs (its timers' keys aside):
 * those its record keys may stand for and, for a stage that receives a broadcast, the shard's
 * copy of the broadcast state, which its keyed elements read whatever their key.
 */
export function keysOfRecords(plan: Plan, stage: Stage, records: readonly KafkaRecord[]): KeyRef[] {
  if (!hasKeyedState(stage)) return [];
  const keys = candidateKeys(records, plan.maxParallelism);
  return receivesBroadcast(stage) ? [...keys, keyRef(BROADCAST_KEY, plan.maxParallelism)] : keys;
}

/** Whether `record`'s Kafka key may stand for `key` (see {@link candidateKeys}). */
function standsFor(record: KafkaRecord, key: KeyRef, maxParallelism: number): boolean {
  return record.key !== null && keysOfText(record.key.toString('utf8'), maxParallelism).some((k) => k.serialized === key.serialized);
}

/** The state of one key outgrew its item: a failure of the batch's records with that key, under the bad-record policy. */
class KeyStateLimitError extends Error {
  override readonly name = 'KeyStateLimitError';

  constructor(bytes: number) {
    super(
      `the state of its key would take ${bytes} bytes deflated, more than the ${MAX_KEY_STATE_BYTES} a key may hold (every batch that ` +
        `changes the key writes all of it): keep less per key (reduce or aggregate instead of keeping every element, a StateTtlConfig, shorter windows)`,
    );
  }
}

function receivesBroadcast(stage: Stage): boolean {
  return stage.input.kind === 'repartition' && stage.input.keyBy.broadcast !== undefined;
}

function hasKeyedState(stage: Stage): boolean {
  return stage.nodes.some((node) => node.role === 'operator' && node.transformation.keyed);
}

/**
 * What the shard's log holds past `from`, for a tick of a shard that must catch up (see
 * {@link ShardProgress.catchUp}); `more` says the log holds more than it read.
 */
async function readBehind(log: ShardLog, from: number, max: number): Promise<{ records: KafkaRecord[]; more: boolean }> {
  const { records, next } = await log.readAvailable(from, max);
  if (records.length === max) return { records, more: true };
  // A read stops at the last stable offset: with a transaction still open before the log's
  // end, the shard has not caught up, and later ticks read on.
  return { records, more: !(await log.readThrough(next, await log.end())) };
}

/**
 * Step 2 of the processor (docs/PROTOCOL.md): drops what was already processed, starts a shard
 * that never committed where its input starts, rereads transactional input with
 * read_committed, reads a catch-up tick's records, and fills a gap from the log.
 */
async function alignInput(batch: ShardBatch, progress: ShardProgress, delivered: readonly KafkaRecord[]): Promise<AlignedInput> {
  const { input } = batch;
  const from = await startOf(batch, progress);
  let records = delivered.filter((record) => record.offset >= from);
  const skipped = delivered.length - records.length;
  let filled = 0;
  const last = records.at(-1);
  const reread = input.kind === 'repartition' && input.transactional;
  if (reread && last) {
    const deliveredCount = records.length;
    records = await input.log.read(from, last.offset + 1);
    filled = Math.max(0, records.length - deliveredCount);
  }
  let catchUp = progress.catchUp === true;
  if (delivered.length === 0 && catchUp) {
    const behind = await readBehind(input.log, from, batch.maxCatchUpRecords);
    records = behind.records;
    filled = records.length;
    catchUp = behind.more;
  }
  const first = records[0];
  // A reread already covers the range from the expected offset; only delivered records can leave a gap.
  if (!reread && first && first.offset > from) {
    const gap = await input.log.read(from, first.offset);
    filled = gap.length;
    records = [...gap, ...records];
  }
  // Past the last delivered offset, whatever a reread returned: aborted records and
  // transaction markers occupy offsets too.
  const after = Math.max(last?.offset ?? -1, records.at(-1)?.offset ?? -1) + 1;
  return { from, records, delivered: delivered.length, skipped, filled, next: after > 0 ? after : from, catchUp };
}

/** What one run of the stage over a batch's records left: its state, its executor, and the input watermark it applied. */
interface StageRun {
  readonly state: BatchStateBackend;
  readonly executor: StageExecutor;
  readonly input: Awaited<ReturnType<typeof inputWatermarkOf>> | undefined;
  readonly keysRead: number;
}

/** What every run of one batch's stage shares. */
interface RunContext {
  readonly batch: ShardBatch;
  readonly claim: ShardClaim;
  readonly progress: ShardProgress;
  readonly aligned: AlignedInput;
  /** Whether the shard is idle once the executor has run (read once per batch). */
  readonly idle: (executor: StageExecutor) => Promise<boolean>;
}

/**
 * Every source partition of the shard is idle, and its input holds no committed record at or
 * after `next`: a partition that looks idle only because its invocations failed for a while has
 * a backlog, and is not idle, or its records would reach later stages after their watermark.
 */
function idleness(log: ShardLog, next: number): (executor: StageExecutor) => Promise<boolean> {
  let backlogged: Promise<boolean> | undefined;
  const backlog = () => (backlogged ??= log.readAvailable(next, 1).then(({ records }) => records.length > 0));
  return async (executor) => executor.isIdle() && !(await backlog());
}

/** Loads the state of the keys not loaded yet; returns how many it read. */
async function loadKeys(context: RunContext, state: BatchStateBackend, keys: readonly KeyRef[]): Promise<number> {
  const missing = [...new Map(keys.filter((k) => !state.isLoaded(k)).map((k) => [k.serialized, k])).values()];
  if (missing.length === 0) return 0;
  const loaded = await context.batch.store.read(context.claim, missing);
  for (const key of missing) state.load(key, loaded.get(key.serialized));
  return missing.length;
}

/**
 * Runs the stage over `accepted`, with `rejected` handed to the bad-record policy first: the
 * records of a key whose state outgrew its item, found by an earlier run of the same batch.
 */
async function runStage(context: RunContext, accepted: readonly KafkaRecord[], rejected: readonly { record: KafkaRecord; error: Error }[]): Promise<StageRun> {
  const { batch, progress, aligned } = context;
  const { plan, stage, shard, input } = batch;
  const state = new BatchStateBackend();
  let keysRead = 0;
  const formatsReady = prepareFormats(stage, accepted);
  formatsReady?.catch(() => undefined);
  if (hasKeyedState(stage)) {
    const snapshotTimers = (progress.executor?.timers ?? []).filter((t) => t.timestamp <= (progress.executor?.watermark ?? Number.MIN_SAFE_INTEGER));
    keysRead += await loadKeys(context, state, [...keysOfRecords(plan, stage, accepted), ...snapshotTimers.map((t) => t.key)]);
  }
  if (formatsReady) await formatsReady;
  const executor = new StageExecutor({
    plan,
    stage,
    state,
    clock: batch.clock,
    ...(progress.executor ? { snapshot: progress.executor } : {}),
    ...(batch.maxRecordBytes ? { maxRecordBytes: batch.maxRecordBytes } : {}),
  });
  // A partition that never sends a record turns idle after the idleness timeout, counted from its first invocation.
  if (input.kind === 'source') executor.assignPartitions([shard.shard]);
  for (const { record, error } of rejected) executor.rejectRecord(record, error);
  const segments = emissionSegments(accepted, plan.watermarkEmission, stage);
  for (const [index, segment] of segments.entries()) {
    executor.processRecords(segment, { holdWatermark: true });
    if (index === segments.length - 1) break;
    // An emission point within the batch: the timers it makes due need their keys' state.
    const emitted = executor.pendingWatermark();
    keysRead += await loadKeys(context, state, executor.dueTimerKeys(emitted));
    executor.processWatermark(emitted);
  }
  const held = input.kind === 'repartition' ? await inputWatermarkOf(input, progress.heldInputWatermark, aligned.next, executor.currentWatermark()) : undefined;
  const watermark = held ? Math.max(executor.currentWatermark(), held.applied) : await sourceWatermark(context, executor);
  keysRead += await loadKeys(context, state, executor.dueTimerKeys(watermark));
  executor.processWatermark(watermark);
  executor.advanceProcessingTime();
  return { state, executor, input: held, keysRead };
}

/** A source shard's watermark: its own, or its stage's active one once it is idle. */
async function sourceWatermark(context: RunContext, executor: StageExecutor): Promise<number> {
  const own = executor.pendingWatermark();
  const { input } = context.batch;
  const stageWatermark = input.kind === 'source' ? input.stageWatermark : Number.MIN_SAFE_INTEGER;
  return stageWatermark > own && (await context.idle(executor)) ? stageWatermark : own;
}

/** Runs the stage, rejecting the records that would take their key's state past what an item holds. */
async function runWithinKeyStateLimit(context: RunContext): Promise<StageRun> {
  const { batch, aligned } = context;
  const { records } = aligned;
  const { maxParallelism } = batch.plan;
  const rejected = new Map<KafkaRecord, Error>();
  const without = (dropped: ReadonlySet<KafkaRecord>) => records.filter((record) => !dropped.has(record));
  let ran = await runStage(context, records, []);
  for (let oversized = oversizedKeyState(ran.state.changes()); oversized; oversized = oversizedKeyState(ran.state.changes())) {
    const { key, bytes } = oversized;
    const own = records.filter((record) => !rejected.has(record) && standsFor(record, key, maxParallelism));
    // Grown by timers alone, it is no record's fault: the shard stops, naming the key.
    if (own.length === 0) throw new KeyStateTooLargeError(batch.shard, key, bytes);
    // The longest first part of the key's records that its state holds, by bisection: the
    // record that would outgrow it and the key's later records in the batch are rejected.
    let fits = 0;
    let outgrows = own.length;
    while (outgrows - fits > 1) {
      const middle = Math.floor((fits + outgrows) / 2);
      const trial = await runStage(context, without(new Set([...rejected.keys(), ...own.slice(middle)])), []);
      if (oversizedKeyState(trial.state.changes().filter((change) => change.key.serialized === key.serialized))) outgrows = middle;
      else fits = middle;
    }
    const error = new KeyStateLimitError(bytes);
    for (const record of own.slice(fits)) rejected.set(record, error);
    ran = await runStage(
      context,
      without(new Set(rejected.keys())),
      [...rejected].map(([record, reason]) => ({ record, error: reason })),
    );
  }
  return ran;
}

/**
 * Step 3 of the processor (docs/PROTOCOL.md): loads the state of the batch's keys (and of the
 * keys whose timers come due), runs the stage, and applies the watermark. A record that fails
 * under `BadRecordPolicy.fail` makes the batch one that only acknowledges, with the failure
 * counted, so that the shard stops at the policy's bound.
 */
async function runBatch(batch: ShardBatch, claim: ShardClaim, aligned: AlignedInput): Promise<PreparedBatch> {
  const progress = claimedProgress(claim);
  const context: RunContext = { batch, claim, progress, aligned, idle: idleness(batch.input.log, aligned.next) };
  let ran: StageRun;
  try {
    ran = await runWithinKeyStateLimit(context);
  } catch (error) {
    if (!(error instanceof BadRecordError)) throw error;
    // Each attempt at a failing record is committed (it acknowledges, and changes nothing else).
    return acknowledgeOnly(claim, aligned.from, aligned.delivered, { failure: failedAgain(progress.failure, error, batch.clock()), error });
  }
  const { state, executor, input, keysRead } = ran;
  const changes = state.changes();
  const outputs = executor.drainOutputs();
  const dropped = droppedBy(executor.getMetrics());
  const droppedSoFar = sum(progress.dropped ?? NONE_DROPPED, dropped);
  return {
    claim,
    outputs,
    progress: {
      offset: aligned.next,
      executor: executor.snapshot(),
      ...(aligned.catchUp ? { catchUp: true } : {}),
      ...(input?.held ? { heldInputWatermark: input.held } : {}),
      ...(Object.values(droppedSoFar).some((n) => n > 0) ? { dropped: droppedSoFar } : {}),
    },
    from: aligned.from,
    changes,
    skipped: aligned.skipped,
    filled: aligned.filled,
    keysRead,
    keysWritten: changes.length,
    idle: await context.idle(executor),
    dropped,
  };
}

/**
 * Steps 2 and 3 of the processor for a claim: the batch, run and ready for its state to be
 * written. A shard that has stopped at a failing record, or a claim that may not process (its
 * slot busy, its record full: docs/PROTOCOL.md), only acknowledges.
 */
export async function prepareBatch(batch: ShardBatch, claim: ShardClaim, delivered: readonly KafkaRecord[], mayProcess: boolean): Promise<PreparedBatch> {
  const progress = claimedProgress(claim);
  if (hasStopped(batch.plan, progress.failure)) return acknowledgeOnly(claim, await startOf(batch, progress), delivered.length, { failure: progress.failure });
  if (!mayProcess) return acknowledgeOnly(claim, await startOf(batch, progress), delivered.length);
  return runBatch(batch, claim, await alignInput(batch, progress, delivered));
}
