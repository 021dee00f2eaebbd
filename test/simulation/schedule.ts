// The draw of one schedule: everything a seed decides before the world runs (the pipeline, the
// faults, the internal limits, the operator's restore), each part from a stream of its own, so
// that a change to one part leaves every other as it was.
import { OutputCommit } from '../../lib/api/index.js';
import type { KafkaEventSource } from '../../lib/aws/kafka-event.js';
import type { ProcessorLimits } from '../../lib/runtime/processor.js';
import type { PackOptions } from '../../lib/state/packs.js';
import type { ScheduleKind } from '../helpers/order-totals-kinds.js';
import { seededRandom } from '../helpers/orders.js';
import type { FaultRates } from './scheduler.js';

/** Everything a schedule draws from its seed; a replay with the same values runs the same interleaving. */
export interface ScheduleConfig {
  readonly seed: number;
  readonly kind: ScheduleKind;
  readonly orders: number;
  readonly partitions: number;
  /** One source partition never gets a record; the source has idleness set. */
  readonly idlePartition: boolean;
  /** Requests answered before the faults stop. */
  readonly faultSteps: number;
  readonly faults: FaultRates;
  readonly transactionPoolSize: number;
  /** Short enough that stalled commit functions lose transactions; undefined: the default 15 minutes. */
  readonly transactionTimeoutMs: number | undefined;
  readonly maxProducerEpoch: number;
  readonly maxBatch: number;
  /** The source emits watermarks also every this many offsets (env.setWatermarkEmission), not only per batch. */
  readonly watermarkEveryRecords: number | undefined;
  /**
   * A savepoint taken and restored once this fraction of the fault phase's requests are answered, as an operator does it:
   * the coordinator and commit functions stopped (deliveries may still be running: the restore
   * fences them), and, to grow the source by `addPartitions`, the producers paused and the
   * pipeline caught up first. Orders go where Kafka's default partitioner puts them.
   */
  readonly restore: { readonly at: number; readonly addPartitions: number } | undefined;
  /** When the EXACTLY_ONCE output becomes visible: at checkpoints, or as each invocation commits (per batch). */
  readonly outputCommit: OutputCommit;
  /**
   * The coordinator ticks a lagging shard only once the checkpoint has been in flight for its
   * period, as deployed (`tickAfterMs`), instead of at once.
   */
  readonly tickGrace: boolean;
  /** How the shard store packs keys: half the schedules pack a few bytes to an item and spill small states, so that buckets split and keys move between packs and items of their own all the time. */
  readonly packing: PackOptions;
  /** Per Kafka request of an invocation in the fault phase: a refused or timed-out request (scheduler.ts). */
  readonly kafkaErrors: number;
  /** The processor's internal limits: half the schedules draw small ones, as FoundationDB's BUGGIFY does, so that their edges are reached. */
  readonly limits: Partial<ProcessorLimits>;
  /**
   * Input the pipeline must not count, as fractions of the orders: records that are not JSON,
   * dead-lettered, and stragglers stamped minutes behind, which go to a late output or count in
   * their window as the watermark finds them. Undefined: every order is well-formed and on time.
   */
  readonly badInput: BadInput | undefined;
  /** The shape of the events Lambda hands the processor: Amazon MSK's, or self-managed Kafka's under either of its names. */
  readonly eventSource: KafkaEventSource;
}

export interface BadInput {
  readonly malformed: number;
  readonly stragglers: number;
}

/** What a campaign or a replay sets instead of drawing it; `restores` lets a tenth of the seeds draw a mid-run restore. */
export type ScheduleOverrides = Partial<ScheduleConfig> & { readonly restores?: boolean };

export function drawSchedule(seed: number, { restores = false, ...overrides }: ScheduleOverrides = {}): ScheduleConfig {
  const random = seededRandom(seed * 7919 + 17);
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;
  const partitions = pick([1, 2, 3]);
  const drawn: ScheduleConfig = {
    seed,
    kind: pick(['one-stage', 'two-stage'] as const),
    orders: 20 + Math.floor(random() * 60),
    partitions,
    idlePartition: partitions > 1 && random() < 0.3,
    faultSteps: 200 + Math.floor(random() * 1_500),
    faults: {
      crash: pick([0, 0.01, 0.03]),
      stall: pick([0, 0.01, 0.02]),
      throttle: pick([0, 0.03]),
      ambiguous: pick([0, 0.03]),
      // A third of the schedules make one kind of actor stale far more often than the rest.
      ...(random() < 0.34 ? { staleKind: { kind: pick(['commit', 'coordinator', 'delivery', 'tick']), stall: 0.15 } } : {}),
    },
    transactionPoolSize: pick([2, 3, 8, 64]),
    transactionTimeoutMs: random() < 0.5 ? 4_000 : undefined,
    maxProducerEpoch: pick([3, 32_767]),
    maxBatch: pick([3, 10, 40]),
    watermarkEveryRecords: emissionOf(seed),
    restore: undefined,
    outputCommit: outputCommitOf(seed),
    tickGrace: tickGraceOf(seed),
    packing: packingOf(seed),
    limits: limitsOf(seed),
    kafkaErrors: kafkaErrorsOf(seed),
    badInput: badInputOf(seed),
    eventSource: eventSourceOf(seed),
  };
  const config = { ...drawn, ...focusOf(seed, drawn.faults), ...overrides };
  const restore = restores ? restoreOf(seed) : undefined;
  // The default partitioner decides where orders go, and may leave any partition without them.
  return restore ? { ...config, restore, idlePartition: false } : config;
}

/**
 * With `restores`, a tenth of the schedules restore a savepoint mid-run, half of them into a
 * source grown by one or two partitions. Drawn from a stream of its own.
 */
function restoreOf(seed: number): ScheduleConfig['restore'] {
  const random = seededRandom(seed * 3_593 + 37);
  if (random() >= 0.1) return undefined;
  return { at: 0.2 + random() * 0.6, addPartitions: random() < 0.5 ? 0 : random() < 0.5 ? 1 : 2 };
}

/**
 * Half the schedules commit each invocation's transaction at once (OutputCommit.PER_BATCH).
 * Drawn from a stream of its own, so that every other draw stays as it was; the pinned seeds
 * run at checkpoints, as they were found.
 */
function outputCommitOf(seed: number): OutputCommit {
  return seededRandom(seed * 6_151 + 29)() < 0.5 ? OutputCommit.PER_BATCH : OutputCommit.ON_CHECKPOINT;
}

/**
 * A third of the schedules meet Kafka requests that fail: refused before the broker applied
 * them, or timed out after. Drawn from a stream of its own; the pinned seeds run without, as
 * they were found.
 */
function kafkaErrorsOf(seed: number): number {
  const random = seededRandom(seed * 5_851 + 43);
  return random() < 1 / 3 ? (random() < 0.5 ? 0.01 : 0.04) : 0;
}

/**
 * A third of the schedules read bad input: a tenth or a third of their orders malformed or late
 * (docs/PROTOCOL.md, "The deterministic simulation"). Drawn from a stream of its own; the pinned
 * seeds run without, as they were found.
 */
function badInputOf(seed: number): BadInput | undefined {
  const random = seededRandom(seed * 6_599 + 19);
  if (random() >= 1 / 3) return undefined;
  const share = random() < 0.5 ? 0.1 : 0.3;
  const malformed = random() < 0.5 ? share / 2 : 0;
  return { malformed, stragglers: share - malformed };
}

/**
 * Each schedule's batches reach the processor through one event source's events, encoded as
 * Lambda encodes them and decoded as the handler does (base64 values, headers as signed bytes).
 * Drawn from a stream of its own; the shape draws nothing else, so the pinned seeds take it too.
 */
function eventSourceOf(seed: number): KafkaEventSource {
  const sources = ['aws:kafka', 'SelfManagedKafka', 'aws:SelfManagedKafka'] as const;
  return sources[Math.floor(seededRandom(seed * 3_343 + 31)() * sources.length)] ?? 'aws:kafka';
}

/**
 * A third of the schedules tick lagging shards only after a period's grace, as the deployed
 * coordinator and offline mode do. Drawn from a stream of its own; the pinned seeds tick at once,
 * as they were found.
 */
function tickGraceOf(seed: number): boolean {
  return seededRandom(seed * 4_409 + 11)() < 1 / 3;
}

/**
 * Half the schedules run the processor at small internal limits: a record that holds two or
 * eight uncommitted deltas (so that batches only acknowledge until a checkpoint frees them),
 * catch-up ticks that read 5 or 20 records (so that a catch-up takes several), sweeps 4 or 8 ids
 * at a time, and inline deltas of at most 0, 120 or 400 deflated bytes in a record (none inline, or a
 * chain that mixes them with objects). Drawn from a stream of its own. Smaller still, the pipeline is live but slow: with
 * catch-up ticks of one record, a tick per checkpoint, schedules did not finish within the
 * 180 simulated seconds the stopping rule allows.
 */
function limitsOf(seed: number): Partial<ProcessorLimits> {
  const random = seededRandom(seed * 9_391 + 13);
  if (random() < 0.5) return {};
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;
  return { maxUncommittedDeltas: pick([2, 8]), maxCatchUpRecords: pick([5, 20]), sweepConcurrency: pick([4, 8]), maxInlineDeltaBytes: pick([0, 120, 400]) };
}

/** Drawn from a stream of its own, so that every other draw stays as it was. */
function packingOf(seed: number): PackOptions {
  const random = seededRandom(seed * 5_113 + 7);
  if (random() < 0.5) return {};
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;
  const liveBytesPerPack = pick([16, 48, 120]);
  const denseLiveBytesPerPack = liveBytesPerPack * pick([1, 4, 64]);
  const spillStateBytes = pick([24, 64, 160, 4_096]);
  // Chunks of a hundred bytes to a kilobyte deflated cut a spilled state into a few items, so that a key's items are written, read and fenced apart; smaller ones made a tick write hundreds of items, longer than ticks come, and shards fenced each other without end.
  return { liveBytesPerPack, denseLiveBytesPerPack, spillStateBytes, chunkBytes: pick([96, 256, 1_024]) };
}

/**
 * A fifth of the schedules emit watermarks within batches too, every 1 or 4 offsets, so that
 * timers fire between a batch's records and load state the batch does not hold. Drawn from a
 * stream of its own, so that every other draw stays as it was; no pinned seed draws it, so
 * their interleavings stay as they were found.
 */
function emissionOf(seed: number): number | undefined {
  const random = seededRandom(seed * 7_727 + 17);
  return random() < 0.2 ? (random() < 0.5 ? 1 : 4) : undefined;
}

/**
 * A tenth of the schedules each aim at an interleaving that takes several faults in a row:
 * drawn from a stream of their own, so that every other schedule stays as it was.
 *  - A stale commit run while the shard's invocations keep dying, in a pool of two: the slot of
 *    a transaction it still means to commit is reused before the shard commits again.
 *  - A stale coordinator, whose checkpoint completes and commits behind its back.
 *  - Zombie deliveries, which a successor overtakes while they are stalled.
 */
function focusOf(seed: number, drawn: FaultRates): Partial<ScheduleConfig> {
  const random = seededRandom(seed * 104_729 + 3);
  const roll = random();
  if (roll >= 0.3) return {};
  if (roll >= 0.2) {
    // Zombie deliveries: stale between their ownership check and their first write, and dying
    // before they clean up, under the default transaction timeout that keeps what they leave open.
    return { faults: { ...drawn, crash: Math.max(drawn.crash, 0.03), staleKind: { kind: 'delivery', stall: 0.3 } }, transactionTimeoutMs: undefined };
  }
  // Checkpoints every second through a long fault phase, and some faults everywhere, so that
  // deliveries are duplicated and commit runs overlap too.
  const focused = { transactionTimeoutMs: 4_000, faultSteps: 2_000 + Math.floor(random() * 2_000) };
  const base = { ...drawn, crash: Math.max(drawn.crash, 0.01), stall: Math.max(drawn.stall, 0.01) };
  if (roll < 0.1) {
    return {
      ...focused,
      transactionPoolSize: 2,
      faults: { ...base, staleKind: { kind: 'commit', stall: 0.3 }, crashKinds: { kinds: ['delivery', 'duplicate', 'tick'], crash: 0.08 } },
    };
  }
  return { ...focused, faults: { ...base, staleKind: { kind: 'coordinator', stall: 0.3 } } };
}
