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

export class OffsetGapError extends Error {
  override readonly name = 'OffsetGapError';

  constructor(
    readonly shard: ShardRef,
    readonly from: number,
    readonly to: number,
  ) {
    super(`Shard ${shard.stage}/${shard.shard} expected offset ${from} but was given ${to}: offsets [${from}, ${to}) are missing`);
  }
}

export interface ShardBatchOptions {
  readonly plan: Plan;
  readonly stage: Stage;
  readonly store: ShardStore;
  readonly shard: ShardRef;
  /** One partition's records, in offset order, as delivered (duplicates and all). */
  readonly records: readonly KafkaRecord[];
  readonly clock: () => number;
  /**
   * Called once the stage has run, before its changed keys are written, with what the caller
   * needs to start work that runs beside the writes (the processor's delta object). Not called
   * for a batch that only acknowledges.
   */
  readonly beforeWrite?: (batch: Pick<PreparedBatch, 'claim' | 'from' | 'changes' | 'outputs'>) => void;
  /** A claim of the shard already sent (the processor sends it while it reads the coordinator record); else the batch claims. */
  readonly claim?: Promise<ShardClaim>;
  /** Reads the committed records of a gap; without it a gap is an error. */
  readonly readGap?: (from: number, to: number) => Promise<KafkaRecord[]>;
  /**
   * Where a shard that never committed starts: the offset its source's OffsetsInitializer
   * names. Without it, the first delivered record is taken as the start.
   */
  readonly startingOffset?: () => Promise<number>;
  /**
   * For a stage that reads a repartition topic: the watermark of the stages that write it,
   * as of their last committed checkpoint (whose output is all visible by now).
   */
  readonly inputWatermark?: number;
  /**
   * For a stage that reads a source: its watermark over its active shards at the last
   * completed checkpoint. An idle shard follows it, so that its windows and timers fire as the
   * other partitions move on, as they do after a keyBy in Flink, whose operators see the
   * minimum over the active splits.
   */
  readonly stageWatermark?: number;
  /**
   * Whether the shard's input holds committed records at or after an offset. A shard whose
   * partition looks idle only because its invocations failed for a while has a backlog, and
   * is not idle: its records would reach later stages after their watermark.
   */
  readonly backlog?: (offset: number) => Promise<boolean>;
  /** The repartition topic's partition, for applying {@link inputWatermark} only once it is safe. */
  readonly inputLog?: InputLog;
  /**
   * Reads the delivered range again with read_committed, for input written in transactions:
   * whether Lambda's poller reads read_committed is undocumented, so its records are only a
   * hint of which offsets to read.
   */
  readonly rereadCommitted?: (from: number, to: number) => Promise<KafkaRecord[]>;
  /**
   * Reads what the shard's input holds from an offset on, for a tick of a shard that must
   * catch up (see {@link ShardProgress.catchUp}); `more` says the log holds more than it read.
   */
  readonly readBehind?: (from: number) => Promise<{ records: KafkaRecord[]; more: boolean }>;
  /**
   * Whether the claim may process its records. When it may not — its transactional id still
   * holds a transaction that waits for a checkpoint, or its record holds as many uncommitted
   * deltas as it may — the batch processes nothing and only acknowledges, so that the
   * checkpoint can complete and free them; the shard catches up on its records afterwards
   * ({@link ShardProgress.catchUp}).
   */
  readonly canProceed?: (claim: ShardClaim) => boolean;
  /** The largest record each output topic takes (see {@link StageExecutorOptions.maxRecordBytes}). */
  readonly maxRecordBytes?: (topic: string) => number;
}

/** What a repartition stage asks of its input partition before it lets the input watermark through. */
export interface InputLog {
  /**
   * The partition's log end offset now, past the records of open transactions: the last
   * stable offset would stop before an open transaction that began ahead of committed records.
   */
  end(): Promise<number>;
  /** Whether, from `from`, everything committed below `until` has been read: nothing committed is left there, and no open transaction holds it back. */
  readThrough(from: number, until: number): Promise<boolean>;
}

/** A processed batch whose keyed state is written but not yet visible: commit it after its output is safe. */
export interface PreparedBatch {
  readonly claim: ShardClaim;
  readonly outputs: StageOutputs;
  readonly progress: ShardProgress;
  /** The offset the batch started at: the shard's previous offset, or its starting offset. */
  readonly from: number | null;
  /** The keyed state the batch changed, written under the claim's epoch. */
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

/**
 * The input watermark a repartition stage may apply now. The upstream stages' watermark at
 * their last committed checkpoint covers output that is all committed — but a committed record
 * may still be unreadable behind an open transaction of a later checkpoint, at any offset below
 * the partition's end. So the watermark is held until the shard has read through the end
 * offset seen when it was offered (read after the coordinator record), then applied; one is
 * held at a time, so the shard's watermark trails its upstream's by a checkpoint or so.
 */
async function inputWatermarkOf(
  options: ShardBatchOptions,
  held: ShardProgress['heldInputWatermark'],
  next: number | null,
  current: number,
): Promise<{ applied: number; held: ShardProgress['heldInputWatermark'] }> {
  const offered = options.inputWatermark ?? Number.MIN_SAFE_INTEGER;
  const log = options.inputLog;
  if (!log || next === null) return { applied: offered, held };
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
      `the state of its key would take ${bytes} bytes, more than the ${MAX_KEY_STATE_BYTES} a key may hold (its DynamoDB item ` +
        `keeps it twice, within 400 KB): keep less per key (reduce or aggregate instead of keeping every element, a StateTtlConfig, shorter windows)`,
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
 * Steps 1-3, 5 and 6 of the processor (docs/PROTOCOL.md): claims the shard, drops what was
 * already processed, fills a gap, loads the state of the batch's keys (and of the keys whose
 * timers come due), runs the stage, and writes the changed keys under the claim's epoch. The
 * caller writes the outputs and then commits with `store.commit(claim, progress)`.
 */
export async function prepareShardBatch(options: ShardBatchOptions): Promise<PreparedBatch> {
  const { plan, stage, store, shard, clock } = options;
  const claim = await (options.claim ?? store.claim(shard));
  const progress = (claim.progress as ShardProgress | undefined) ?? INITIAL_PROGRESS;
  const expected = progress.offset ?? (options.startingOffset ? await options.startingOffset() : null);
  /**
   * A batch that processes nothing and only acknowledges; the shard catches up on its records
   * afterwards ({@link ShardProgress.catchUp}), since the trigger moves on past them.
   */
  const acknowledgeOnly = (failed: Pick<PreparedBatch, 'failure' | 'error'> = {}): PreparedBatch => ({
    claim,
    outputs: emptyStageOutputs(),
    progress: { ...progress, offset: expected, catchUp: true, ...(failed.failure ? { failure: failed.failure } : {}) },
    from: expected,
    changes: [],
    skipped: options.records.length,
    filled: 0,
    keysRead: 0,
    keysWritten: 0,
    idle: false,
    dropped: NONE_DROPPED,
    ...failed,
  });
  if (hasStopped(plan, progress.failure)) return acknowledgeOnly({ failure: progress.failure });
  if (options.canProceed && !options.canProceed(claim)) return acknowledgeOnly();

  let records = options.records.filter((record) => expected === null || record.offset >= expected);
  const skipped = options.records.length - records.length;
  let filled = 0;
  const delivered = records.at(-1);
  if (options.rereadCommitted && delivered) {
    const deliveredCount = records.length;
    records = await options.rereadCommitted(expected ?? records[0]?.offset ?? delivered.offset, delivered.offset + 1);
    filled = Math.max(0, records.length - deliveredCount);
  }
  let catchUp = progress.catchUp === true;
  if (options.records.length === 0 && options.readBehind && catchUp && expected !== null) {
    const behind = await options.readBehind(expected);
    records = behind.records;
    filled = records.length;
    catchUp = behind.more;
  }
  const first = records[0];
  // A reread already covers the range from the expected offset; only delivered records can leave a gap.
  if (!options.rereadCommitted && first && expected !== null && first.offset > expected) {
    if (!options.readGap) throw new OffsetGapError(shard, expected, first.offset);
    const gap = await options.readGap(expected, first.offset);
    filled = gap.length;
    records = [...gap, ...records];
  }

  /**
   * Runs the stage over `accepted`, with `rejected` handed to the bad-record policy first: the
   * records of a key whose state outgrew its item, found by an earlier run of the same batch.
   */
  const run = async (accepted: readonly KafkaRecord[], rejected: readonly { record: KafkaRecord; error: Error }[]) => {
    const state = new BatchStateBackend();
    const load = async (keys: readonly KeyRef[]) => {
      const missing = [...new Map(keys.filter((k) => !state.isLoaded(k)).map((k) => [k.serialized, k])).values()];
      if (missing.length === 0) return 0;
      const loaded = await store.read(claim, missing);
      for (const key of missing) state.load(key, loaded.get(key.serialized));
      return missing.length;
    };
    let keysRead = 0;
    const formatsReady = prepareFormats(stage, accepted);
    formatsReady?.catch(() => undefined);
    if (hasKeyedState(stage)) {
      const snapshotTimers = (progress.executor?.timers ?? []).filter(
        (t) => t.timestamp <= (progress.executor?.watermark ?? Number.MIN_SAFE_INTEGER),
      );
      keysRead += await load([...keysOfRecords(plan, stage, accepted), ...snapshotTimers.map((t) => t.key)]);
    }

    if (formatsReady) await formatsReady;
    const executor = new StageExecutor({
      plan,
      stage,
      state,
      clock,
      ...(progress.executor ? { snapshot: progress.executor } : {}),
      ...(options.maxRecordBytes ? { maxRecordBytes: options.maxRecordBytes } : {}),
    });
    // A partition that never sends a record turns idle after the idleness timeout, counted from its first invocation.
    if (stage.input.kind === 'source') executor.assignPartitions([shard.shard]);
    for (const { record, error } of rejected) executor.rejectRecord(record, error);
    const segments = emissionSegments(accepted, plan.watermarkEmission, stage);
    for (const [index, segment] of segments.entries()) {
      executor.processRecords(segment, { holdWatermark: true });
      if (index === segments.length - 1) break;
      // An emission point within the batch: the timers it makes due need their keys' state.
      const emitted = executor.pendingWatermark();
      keysRead += await load(executor.dueTimerKeys(emitted));
      executor.processWatermark(emitted);
    }
    const input =
      stage.input.kind === 'repartition'
        ? await inputWatermarkOf(options, progress.heldInputWatermark, next, executor.currentWatermark())
        : undefined;
    const watermark = input ? Math.max(executor.currentWatermark(), input.applied) : await sourceWatermark(executor);
    keysRead += await load(executor.dueTimerKeys(watermark));
    executor.processWatermark(watermark);
    executor.advanceProcessingTime();
    return { state, executor, input, keysRead };
  };

  // Past the last delivered offset, whatever a reread returned: aborted records and
  // transaction markers occupy offsets too.
  const after = Math.max(delivered?.offset ?? -1, records.at(-1)?.offset ?? -1) + 1;
  const next = after > 0 ? after : expected;
  let backlogged: Promise<boolean> | undefined;
  const backlog = () => (backlogged ??= next !== null && options.backlog ? options.backlog(next) : Promise.resolve(false));
  const idle = async (executor: StageExecutor) => executor.isIdle() && !(await backlog());
  const sourceWatermark = async (executor: StageExecutor) => {
    const own = executor.pendingWatermark();
    const { stageWatermark } = options;
    return stageWatermark !== undefined && stageWatermark > own && (await idle(executor)) ? stageWatermark : own;
  };
  const rejected = new Map<KafkaRecord, Error>();
  const without = (dropped: ReadonlySet<KafkaRecord>) => records.filter((record) => !dropped.has(record));
  /** Runs the stage, rejecting the records that would take their key's state past what an item holds. */
  const runWithinKeyStateLimit = async () => {
    let ran = await run(records, []);
    for (let oversized = oversizedKeyState(ran.state.changes()); oversized; oversized = oversizedKeyState(ran.state.changes())) {
      const { key, bytes } = oversized;
      const own = records.filter((record) => !rejected.has(record) && standsFor(record, key, plan.maxParallelism));
      // Grown by timers alone, it is no record's fault: the shard stops, naming the key.
      if (own.length === 0) throw new KeyStateTooLargeError(shard, key, bytes);
      // The longest first part of the key's records that its state holds, by bisection: the
      // record that would outgrow it and the key's later records in the batch are rejected.
      let fits = 0;
      let outgrows = own.length;
      while (outgrows - fits > 1) {
        const middle = Math.floor((fits + outgrows) / 2);
        const trial = await run(without(new Set([...rejected.keys(), ...own.slice(middle)])), []);
        if (oversizedKeyState(trial.state.changes().filter((change) => change.key.serialized === key.serialized))) outgrows = middle;
        else fits = middle;
      }
      const error = new KeyStateLimitError(bytes);
      for (const record of own.slice(fits)) rejected.set(record, error);
      ran = await run(
        without(new Set(rejected.keys())),
        [...rejected].map(([record, reason]) => ({ record, error: reason })),
      );
    }
    return ran;
  };
  let ran: Awaited<ReturnType<typeof run>>;
  try {
    ran = await runWithinKeyStateLimit();
  } catch (error) {
    if (!(error instanceof BadRecordError)) throw error;
    // Each attempt at a failing record is committed (it acknowledges, and changes nothing else),
    // so that the shard counts them and stops at the policy's bound.
    return acknowledgeOnly({ failure: failedAgain(progress.failure, error, clock()), error });
  }
  const { state, executor, input, keysRead } = ran;

  const changes = state.changes();
  const outputs = executor.drainOutputs();
  options.beforeWrite?.({ claim, from: expected, changes, outputs });
  await store.write(claim, changes);
  const dropped = droppedBy(executor.getMetrics());
  const droppedSoFar = sum(progress.dropped ?? NONE_DROPPED, dropped);
  return {
    claim,
    outputs,
    progress: {
      offset: next,
      executor: executor.snapshot(),
      ...(catchUp ? { catchUp } : {}),
      ...(input?.held ? { heldInputWatermark: input.held } : {}),
      ...(Object.values(droppedSoFar).some((n) => n > 0) ? { dropped: droppedSoFar } : {}),
    },
    from: expected,
    changes,
    skipped,
    filled,
    keysRead,
    keysWritten: changes.length,
    idle: await idle(executor),
    dropped,
  };
}
