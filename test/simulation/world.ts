// One simulated schedule of the whole serverless runtime: the real processor, coordinator,
// commit function and rollback, driven in one process against the DynamoDB, S3 and Kafka
// twins, with a seeded scheduler deciding every interleaving and fault. After the faults
// stop, everything must finish, and the read_committed output must equal a plain computation.
import { OutputCommit, WatermarkEmission } from '../../lib/api/index.js';
import { DeliveryGuarantee } from '../../lib/kafka/delivery-guarantee.js';
import type { KafkaRecord } from '../../lib/kafka/records.js';
import type { Plan } from '../../lib/plan/plan.js';
import { planPipeline } from '../../lib/plan/planner.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { listShards, shardRefOf, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { Processor } from '../../lib/runtime/processor.js';
import { runtimeProgressOf, type RuntimeProgress } from '../../lib/runtime/shard-record.js';
import { hasUncommittedWork, restingState, wakeCoordinator } from '../../lib/runtime/quiescence.js';
import {
  OutputPastSnapshotError,
  RestoreInterruptedError,
  restoreSnapshot,
  SavepointNotReadyError,
  writeSavepoint,
} from '../../lib/runtime/savepoints.js';
import { rollbacksPending } from '../../lib/runtime/rollback-requests.js';
import { checkpointManifestKey, readManifest, readShardState, sameShard } from '../../lib/snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../../lib/snapshot/snapshot-store.js';
import type { CoordinatorRecord } from '../../lib/state/coordinator-store.js';
import { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { compareOutput, expectedOutput, SCHEDULE_KINDS, type ScheduleKind } from '../helpers/order-totals-kinds.js';
import { closingOrders, closingOrdersOnEveryPartition, generateOrders, seededRandom, type GeneratedOrder } from '../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../helpers/pipelines.js';
import { Crash, Scheduler, ServiceUnavailable, type FaultRates } from './scheduler.js';
import type { PackOptions } from '../../lib/state/packs.js';
import { OnlineChecks, SimulatedCoordinatorStore, SimulatedShardStore, SimulatedSnapshotStore } from './stores.js';

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
 * A third of the schedules tick lagging shards only after a period's grace, as the deployed
 * coordinator and offline mode do. Drawn from a stream of its own; the pinned seeds tick at once,
 * as they were found.
 */
function tickGraceOf(seed: number): boolean {
  return seededRandom(seed * 4_409 + 11)() < 1 / 3;
}

/** Drawn from a stream of its own, so that every other draw stays as it was. */
function packingOf(seed: number): PackOptions {
  const random = seededRandom(seed * 5_113 + 7);
  if (random() < 0.5) return {};
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;
  const liveBytesPerPack = pick([16, 48, 120]);
  return { liveBytesPerPack, denseLiveBytesPerPack: liveBytesPerPack * pick([1, 4, 64]), spillStateBytes: pick([24, 64, 160, 4_096]) };
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

export interface SimulationResult {
  readonly config: ScheduleConfig;
  /** What broke; empty when every invariant held. */
  readonly problems: string[];
  readonly steps: number;
  readonly counts: Scheduler['counts'] & { invocations: number; rollbacks: number; checkpoints: number; rests: number; outages: number; nestedAborts: number; errors: Record<string, number> };
  readonly trace: string[];
}

const START = Date.UTC(2026, 11, 1, 9, 0, 0);
/** After the faults, how many requests everything may take to finish before the schedule counts as stuck. */
const CALM_STEP_LIMIT = 40_000;
/**
 * And how long, in simulated time: far less than the default 15-minute transaction timeout, so
 * that a transaction left open until the broker times it out (a zombie's) counts as stuck.
 */
const CALM_TIME_LIMIT_MS = 180_000;
const INVOCATION_TIMEOUT_MS = 30_000;
const POLL_EVERY_MS = 300;
const PRODUCE_EVERY_MS = 400;
/** A shard record past this many bytes of JSON is on its way to DynamoDB's 400 KB item limit. */
const RECORD_SIZE_BUDGET = 64_000;
const IDLENESS_MS = 5_000;
const OUTPUT_PARTITIONS = 2;

/** Lambda's event-source mapping for one shard: its position, the batch in flight, and its backoff after failures. */
interface Mapping {
  readonly target: ShardTarget;
  position: number;
  inFlight: { readonly startedAt: number; settled: boolean } | undefined;
  nextPollAt: number;
  failures: number;
}

export async function simulate(config: ScheduleConfig, options: { trace?: boolean } = {}): Promise<SimulationResult> {
  const random = seededRandom(config.seed);
  const traced = options.trace === true;
  const sim = new Scheduler(random, START, traced);
  sim.faults = config.faults;
  const name = `sim-${config.seed}`;
  const input = `${name}-orders`;
  const kafka = new KafkaTwin({ clock: sim.clock, io: sim.io('kafka'), maxProducerEpoch: config.maxProducerEpoch });
  const checks = new OnlineChecks();
  const store = new SimulatedShardStore(sim.io('dynamodb'), config.packing, checks);
  const coordinatorStore = new SimulatedCoordinatorStore(sim.io('dynamodb'), checks);
  const plan = planPipeline(
    orderTotalsPipeline({
      name,
      input,
      brokers: ['127.0.0.1:1'],
      ...SCHEDULE_KINDS[config.kind],
      ...(config.idlePartition || config.restore ? { idlenessMs: IDLENESS_MS } : {}),
      ...(config.transactionTimeoutMs === undefined ? {} : { transactionTimeoutMs: config.transactionTimeoutMs }),
      ...(config.watermarkEveryRecords === undefined ? {} : { watermarkEmission: WatermarkEmission.everyRecords(config.watermarkEveryRecords) }),
      outputCommit: config.outputCommit,
    }),
  );
  // Object ids from a stream of their own, so that they change no other draw.
  const snapshots = new SimulatedSnapshotStore(sim.io('s3'), plan.maxParallelism, seededRandom(config.seed * 8_111 + 5));
  kafka.createTopic(input, config.partitions);
  kafka.createTopic(`${name}-out`, OUTPUT_PARTITIONS);
  for (const stage of plan.stages) if (stage.input.kind === 'repartition') kafka.createTopic(stage.input.topic, stage.input.partitions);

  const active = config.idlePartition ? config.partitions - 1 : config.partitions;
  const { restore } = config;
  // Restored schedules spread more categories, so that a grown source moves some of them.
  const categories = Math.max(active, restore ? 8 : 4);
  const orders = generateOrders({ count: config.orders, seed: config.seed, categories, start: START - 600_000, spacingMs: 8_000 });
  const toRecord = (order: GeneratedOrder) => ({
    topic: input,
    // Unless a restore may grow the source, partition n takes category n (and n + active, ...).
    ...(restore ? {} : { partition: Number(order.category.split('-')[1]) % active }),
    key: order.category,
    value: JSON.stringify({ orderId: order.orderId, category: order.category, amount: order.amount, timestamp: order.timestamp }),
    timestamp: order.timestamp,
  });
  const finalPartitions = config.partitions + (restore?.addPartitions ?? 0);
  const closing = restore ? closingOrdersOnEveryPartition(orders, finalPartitions) : closingOrders(orders, active);
  const toProduce = [...orders, ...closing].map(toRecord);
  let produced = 0;
  let nextProduceAt = sim.now;

  const processor = new Processor({
    plan,
    store,
    coordinator: coordinatorStore,
    kafka,
    clock: sim.clock,
    snapshots,
    transactionPoolSize: config.transactionPoolSize,
    // As on AWS, an asynchronous invocation of the coordinator when a batch finds it resting.
    callCoordinator: () => {
      void coordinate();
      return Promise.resolve();
    },
  });
  let shards = await sim.outside(() => listShards(plan, kafka.admin));
  const mappingOf = (target: ShardTarget): Mapping => ({ target, position: 0, inFlight: undefined, nextPollAt: sim.now, failures: 0 });
  let mappings: Mapping[] = shards.map(mappingOf);
  const counts = { ...sim.counts, invocations: 0, rollbacks: 0, checkpoints: 0, rests: 0, outages: 0, restores: 0, nestedAborts: 0, errors: {} as Record<string, number> };
  /** Where a schedule that restores stands: it stops its triggers, restores, and starts them again. */
  let restorePhase: 'before' | 'catching up' | 'stopped' | 'restoring' | 'done' = restore ? 'before' : 'done';
  const triggersRun = () => restorePhase !== 'stopped' && restorePhase !== 'restoring';
  /**
   * Whether the operator pauses the producers and lets the pipeline catch up before the
   * savepoint: to grow the source, and with per-batch output commit, whose output is visible
   * before its checkpoint, so that a savepoint must wait for a checkpoint that covers it all.
   */
  const pausesInput = restore !== undefined && (restore.addPartitions > 0 || config.outputCommit === OutputCommit.PER_BATCH);
  const failed = (error: unknown) => {
    const errorName = error instanceof Error ? error.name : 'unknown';
    counts.errors[errorName] = (counts.errors[errorName] ?? 0) + 1;
    if (errorName !== 'Crash') sim.log(`failed: ${error instanceof Error ? error.message : String(error)}`);
  };

  const invoke = (target: ShardTarget, records: KafkaRecord[], label: string) => {
    counts.invocations++;
    return sim.spawn(`${label} ${target.stageId}/${target.partition}`, async () => {
      const report = await processor.processShard(target.stageId, target.topic, target.partition, records);
      if (traced) {
        const progress = runtimeProgressOf((await store.inspect(shardRefOf(plan, target)))?.progress);
        sim.log(
          `done ${label} ${target.stageId}/${target.partition} offsets [${records.map((r) => r.offset).join(',')}] filled ${report.filled} ` +
            `skipped ${report.skipped} -> offset ${progress.offset} watermark ${progress.executor?.watermark} acknowledged ` +
            `${progress.acknowledged} out ${report.recordsOut} pending ${JSON.stringify(progress.pending.map((p) => [p.epoch, p.checkpoint]))}`,
        );
      }
      return report;
    });
  };
  const faulty = () => sim.faults.crash > 0 || sim.faults.stall > 0;

  const deliver = async (mapping: Mapping) => {
    const { target } = mapping;
    // Lambda's poller reads the log as the world, not as an actor the scheduler answers.
    const poll = await sim.outside(() => kafka.reader.readAvailable(target.topic, target.partition, mapping.position, config.maxBatch));
    if (poll.records.length === 0) return;
    let records = poll.records;
    // Lambda's poller may cut a batch where it likes: the processor fills the gap from the log.
    if (faulty() && records.length > 2 && random() < 0.1) records = records.slice(1 + Math.floor(random() * (records.length - 1)));
    const attempt = { startedAt: sim.now, settled: false };
    mapping.inFlight = attempt;
    const run = (label: string) =>
      invoke(target, records, label).then(
        () => {
          mapping.failures = 0;
          // A redelivery now and then: the mapping forgets that the batch succeeded.
          if (!(faulty() && random() < 0.1)) mapping.position = Math.max(mapping.position, poll.next);
        },
        (error: unknown) => {
          failed(error);
          // The mapping retries the whole batch, backing off as Lambda does.
          mapping.failures++;
          mapping.nextPollAt = sim.now + Math.min(200 * 2 ** mapping.failures, 5_000);
        },
      );
    // A duplicate delivery of the same batch, at once.
    const runs = faulty() && random() < 0.08 ? [run('delivery'), run('duplicate')] : [run('delivery')];
    void Promise.all(runs).then(() => {
      attempt.settled = true;
    });
  };

  const coordinate = () =>
    sim
      .spawn('coordinator run', async () => {
        // A stopped pipeline's schedule is off, and a batch that calls the coordinator starts nothing.
        if (!triggersRun()) return;
        const tick = async (target: ShardTarget) => {
          // On AWS the tick is an asynchronous invocation; offline mode runs it in place.
          const ticked = invoke(target, [], 'tick').catch(failed);
          if (random() < 0.5) await ticked;
        };
        const wasAsleep = (await coordinatorStore.inspect()).asleep === true;
        const { outcome, record } = await runCoordinator({
          plan,
          store,
          coordinator: coordinatorStore,
          shards,
          tick,
          clock: sim.clock,
          snapshots,
          ...(config.tickGrace ? { tickAfterMs: coordinatorEvery } : {}),
        });
        if (outcome === 'completed') counts.checkpoints++;
        // Each rest but a schedule's last is ended by a batch that woke the coordinator.
        if (outcome === 'asleep' && !wasAsleep) counts.rests++;
        if (traced) sim.log(`coordinator ${outcome} ${JSON.stringify(record)}`);
        if (outcome === 'completed' || record.completed > record.committed) {
          const runs = faulty() && random() < 0.2 ? 2 : 1;
          for (let i = 0; i < runs; i++) void commit();
        }
      })
      .catch(failed);
  const commit = () =>
    sim
      .spawn('commit run', async () => {
        const report = await commitCompletedCheckpoints({ plan, store, coordinator: coordinatorStore, committer: kafka.committer, shards, snapshots });
        counts.rollbacks += report.rollbacks.length;
        if (traced) sim.log(`commit ${JSON.stringify(report)}`);
      })
      .catch(failed);

  const coordinatorEvery = Math.max(100, Math.min(1_000, Math.floor(plan.checkpointing.intervalMs / 4)));
  let nextCoordinatorAt = sim.now;
  const problems: string[] = [];
  // A transaction a committed shard record names is the shard's output: only a broker may lose
  // it (a timeout, a newer producer of its id). One that an EndTxn(abort) ended was aborted by
  // an actor that took its landed commit for fenced, and its rollback only hides the loss.
  coordinatorStore.onRollbackRequested = async (request) => {
    const progress = runtimeProgressOf((await store.inspect(shardRefOf(plan, request)))?.progress);
    const lost = progress.pending.find((p) => p.epoch === request.epoch);
    if (lost && kafka.wasAbortedByRequest(lost.handle)) {
      problems.push(
        `${request.stageId}/${request.topic}/${request.partition}: epoch ${request.epoch}'s transaction, which the shard's committed record names, ` +
          `was aborted on request, and a rollback was requested for it`,
      );
    }
  };
  let calmSince: number | undefined;
  let calmAt = 0;
  /**
   * When the data went quiet, the checkpoint committed by then, and how many commits were seen
   * since: what follows must finish in a few checkpoints. Counted as commits seen, not by
   * checkpoint number: abandoned checkpoints make the numbers jump, and a commit that jumped
   * from 3 to 10 passed the watermark on once, not seven times (found by seed 2820).
   */
  let quiet: { at: number; committed: number | undefined; commits: number } | undefined;

  const worldActs = async () => {
    // Producers pause from catching up to the restore, while a source is grown or output is committed per batch.
    const producing = restorePhase === 'before' || restorePhase === 'done' || !pausesInput;
    // The closing orders are keyed for the grown source's partitions: written before it grows,
    // one meant for a new partition's number would land on an old one, and leave a partition
    // with open windows and nothing to close them.
    const producible = restore?.addPartitions && restorePhase !== 'done' ? orders.length : toProduce.length;
    while (producing && produced < producible && sim.now >= nextProduceAt) {
      const until = Math.min(producible, produced + 1 + Math.floor(random() * 6));
      kafka.append(toProduce.slice(produced, until));
      produced = until;
      nextProduceAt += PRODUCE_EVERY_MS;
    }
    for (const mapping of triggersRun() ? mappings : []) {
      const busy = mapping.inFlight && !mapping.inFlight.settled && sim.now - mapping.inFlight.startedAt < INVOCATION_TIMEOUT_MS;
      if (busy || sim.now < mapping.nextPollAt) continue;
      mapping.nextPollAt = sim.now + POLL_EVERY_MS;
      await deliver(mapping);
    }
    if (sim.now >= nextCoordinatorAt) {
      // Now and then the schedule stops for seconds (throttled concurrency, an outage): the
      // transactions it should commit may time out meanwhile.
      const outage = faulty() && random() < 0.02;
      counts.outages += outage ? 1 : 0;
      nextCoordinatorAt = sim.now + (outage ? 3_000 + Math.floor(random() * 6_000) : coordinatorEvery);
      // EventBridge may deliver a schedule twice.
      const runs = faulty() && random() < 0.1 ? 2 : 1;
      for (let i = 0; i < runs; i++) void coordinate();
    }
  };

  /** Input all delivered and processed, no transaction open. */
  const dataQuiet = async () => produced === toProduce.length && (await inputRead());
  /** What was produced so far all delivered and processed, no transaction open. */
  const inputRead = async () => {
    if (kafka.openTransactions().length > 0) return false;
    for (const { target } of mappings) {
      const progress = runtimeProgressOf((await store.inspect(shardRefOf(plan, target)))?.progress);
      const left = await sim.outside(() => kafka.reader.readAvailable(target.topic, target.partition, progress.offset ?? 0, 1));
      if (left.records.length > 0) return false;
    }
    return true;
  };

  /**
   * Every source shard that turns idle has acknowledged idle. Its idleness counts from its first
   * invocation, which a coordinator outage can hold back well past the input's end.
   */
  const sourcesTurnedIdle = async () => {
    for (const { target } of mappings) {
      const stage = plan.stages.find((s) => s.id === target.stageId);
      if (stage?.input.kind !== 'source' || stage.input.source.watermarks.idlenessMs === undefined) continue;
      if (runtimeProgressOf((await store.inspect(shardRefOf(plan, target)))?.progress).acknowledgedIdle !== true) return false;
    }
    return true;
  };

  /**
   * The rest is what it found: no delivery in flight, every shard past its log's last record,
   * nothing to commit, and the shards as the coordinator saw them when it went to rest (all read
   * without faults). A batch that committed since has called the coordinator, whose run wakes it.
   */
  const restHolds = async (record: CoordinatorRecord) => {
    if (mappings.some((mapping) => mapping.inFlight && !mapping.inFlight.settled)) return false;
    const progress = new Map<ShardTarget, RuntimeProgress | undefined>();
    for (const { target } of mappings) {
      const shard = (await store.inspect(shardRefOf(plan, target)))?.progress;
      progress.set(target, shard === undefined ? undefined : runtimeProgressOf(shard));
      const offset = progress.get(target)?.offset ?? 0;
      if (kafka.committedRecords(target.topic).some((r) => r.partition === target.partition && r.offset >= offset)) return false;
    }
    return restingState(plan, progress, record.completedWatermarks) === record.resting?.state && !hasUncommittedWork(progress, record.committed);
  };

  /** The latest checkpoint triggered when the input was found read, until it is found unread again. */
  let caughtUpAt: number | undefined;
  let grown = false;
  let restoreAttempts = 0;
  let restoreNotBefore = Math.floor(config.faultSteps * (restore?.at ?? 1));
  const runRestore = (add: number) => {
    restoreAttempts++;
    const savepoint = `mid-run-${restoreAttempts}`;
    sim
      .spawn('restore run', async () => {
        const before = { plan, store, coordinator: coordinatorStore, committer: kafka.committer, snapshots, clock: sim.clock };
        const saved = await writeSavepoint({ ...before, shards }, savepoint);
        if (traced) sim.log(`savepoint ${savepoint} of checkpoint ${saved.checkpoint}`);
        // The operator adds them once, between the savepoint and the restore.
        if (add > 0 && !grown) {
          kafka.addPartitions(input, finalPartitions);
          grown = true;
        }
        const now = await listShards(plan, kafka.admin);
        const abortTransactionsOf = (target: ShardTarget) => processor.abortTransactionsOf(target);
        const report = await restoreSnapshot({ ...before, reader: kafka.reader, shards: now, abortTransactionsOf }, { savepoint });
        if (traced) sim.log(`restored ${savepoint}: ${JSON.stringify(report)}`);
        await wakeCoordinator(coordinatorStore, undefined);
        return now;
      })
      .then(
        (now) => {
          // Each new shard's trigger starts at its partition's beginning; the others go on where they were.
          mappings = [...mappings, ...now.filter((target) => !shards.some((old) => sameShard(old, target))).map(mappingOf)];
          shards = now;
          counts.restores++;
          restorePhase = 'done';
        },
        (error: unknown) => {
          failed(error);
          // Run again, as its operator would, unless it refused; or first let the triggers run a while.
          if (error instanceof Crash || error instanceof ServiceUnavailable || error instanceof RestoreInterruptedError) restorePhase = 'stopped';
          else if (error instanceof SavepointNotReadyError || error instanceof OutputPastSnapshotError) {
            restorePhase = 'before';
            restoreNotBefore = sim.steps + 300;
          } else {
            problems.push(`the restore refused: ${error instanceof Error ? error.message : String(error)}`);
            restorePhase = 'done';
          }
        },
      );
  };
  /** Stops the triggers (once the input is read and committed, to grow the source), restores, and starts them again. */
  const restoreMidRun = async (add: number, iteration: number) => {
    // A savepoint needs a committed checkpoint to save.
    if (restorePhase === 'before' && sim.steps >= restoreNotBefore && (await coordinatorStore.inspect()).committed > 0) {
      restorePhase = pausesInput ? 'catching up' : 'stopped';
    }
    if (restorePhase === 'catching up' && iteration % 20 === 0) {
      const record = await coordinatorStore.inspect();
      if (rollbacksPending(record) || !(await inputRead())) caughtUpAt = undefined;
      // A checkpoint triggered after the input was read, and one more per later stage, or a rest,
      // which holds only once checkpoints cover it all. A checkpoint triggered before the read
      // was done may have been acknowledged before it, and not cover it.
      else if (record.committed >= (caughtUpAt ??= record.triggered) + plan.stages.length || (record.asleep && (await restHolds(record)))) {
        restorePhase = 'stopped';
      }
    }
    // Deliveries still running are fenced by the restore's claims; a commit run still running could commit past the savepoint.
    if (restorePhase === 'stopped' && !sim.runs(['coordinator', 'commit'])) {
      restorePhase = 'restoring';
      runRestore(add);
    }
  };

  for (let iteration = 0; ; iteration++) {
    await worldActs();
    if (!(await sim.step())) sim.now += 50;
    if (restore && restorePhase !== 'done') await restoreMidRun(restore.addPartitions, iteration);
    if (calmSince === undefined && sim.steps >= config.faultSteps) {
      sim.calm();
      calmSince = sim.steps;
      calmAt = sim.now;
    }
    if (calmSince === undefined || iteration % 20 !== 0) continue;
    const record = await coordinatorStore.inspect();
    // A rollback still to do has output still to write, however many checkpoints commit meanwhile.
    if (restorePhase === 'done' && !rollbacksPending(record) && (await dataQuiet())) {
      quiet ??= { at: sim.now, committed: undefined, commits: 0 };
      // Once the idle partitions have turned idle, each stage needs a checkpoint or two to pass the watermark on.
      if (quiet.committed === undefined && sim.now - quiet.at >= IDLENESS_MS && (await sourcesTurnedIdle())) quiet.committed = record.committed;
      else if (quiet.committed !== undefined && record.committed > quiet.committed) {
        quiet.committed = record.committed;
        quiet.commits++;
      }
      if (quiet.commits >= plan.stages.length + 2) break;
      // At rest, the coordinator triggers no more checkpoints: what it left must be the whole
      // output, once no invocation is still on its way (a stalled one wakes it when it commits).
      if (record.asleep && (await restHolds(record))) break;
    } else {
      quiet = undefined;
    }
    if (sim.steps - calmSince > CALM_STEP_LIMIT || sim.now - calmAt > CALM_TIME_LIMIT_MS) {
      problems.push(
        `did not finish within ${CALM_STEP_LIMIT} requests or ${CALM_TIME_LIMIT_MS / 1000} s after the faults stopped: ` +
          `checkpoints triggered ${record.triggered}, ` +
          `completed ${record.completed}, committed ${record.committed}; open transactions ${kafka.openTransactions().join(', ') || 'none'}`,
      );
      break;
    }
  }
  while (!sim.idle) await sim.step();

  const out = kafka.committedRecords(`${name}-out`);
  counts.nestedAborts = nestedAbortedPairs(kafka, `${name}-out`);
  const written = out.map((record) => JSON.parse(record.value?.toString() ?? 'null') as Total);
  problems.push(...compareOutput(config.kind, written, expectedOutput(config.kind, orders)));
  // A sink keyed as its stage is keeps each key's results in order; after a second keyBy, two shards may write one sink key.
  if (config.kind === 'one-stage') problems.push(...keyOrderProblems(out));
  if (kafka.openTransactions().length > 0) problems.push(`transactions left open: ${kafka.openTransactions().join(', ')}`);
  const record = await coordinatorStore.inspect();
  for (const { target } of mappings) {
    const shardRecord = await store.inspect(shardRefOf(plan, target));
    const progress = runtimeProgressOf(shardRecord?.progress);
    const where = `${target.stageId}/${target.topic}/${target.partition}`;
    const size = JSON.stringify(shardRecord ?? {}).length;
    if (size > RECORD_SIZE_BUDGET) problems.push(`${where}: shard record of ${size} bytes, over its budget of ${RECORD_SIZE_BUDGET}`);
    if (progress.pending.some((p) => p.checkpoint > record.committed)) problems.push(`${where}: transactions still wait for a checkpoint`);
    const watermark = progress.executor?.watermark ?? Number.MIN_SAFE_INTEGER;
    const overdue = (progress.executor?.timers ?? []).filter((timer) => timer.domain === 'event' && timer.timestamp <= watermark);
    if (overdue.length > 0) problems.push(`${where}: ${overdue.length} timers at or below the watermark never fired`);
  }
  problems.push(...checks.problems, ...snapshots.rewrites);
  problems.push(...(await restoreProblems(plan, record.committed, store, snapshots.unscheduled, shards)));
  if (plan.internalGuarantee !== DeliveryGuarantee.EXACTLY_ONCE) problems.push('the pipeline is not EXACTLY_ONCE');
  await processor.close();
  return { config, problems, steps: sim.steps, counts: { ...counts, ...sim.counts }, trace: sim.trace };
}

/**
 * Pairs of aborted transactions in the topic where one begins inside the other and ends after
 * it: the shape that kafkajs 2.2.4's read_committed consumer misreads (docs/api.md), and that
 * the output check must read past.
 */
function nestedAbortedPairs(kafka: KafkaTwin, topic: string): number {
  let pairs = 0;
  for (let partition = 0; partition < OUTPUT_PARTITIONS; partition++) {
    const aborted = kafka.abortedTransactions(topic, partition);
    for (const outer of aborted) {
      pairs += aborted.filter((inner) => outer.firstOffset < inner.firstOffset && inner.markerOffset < outer.markerOffset).length;
    }
  }
  return pairs;
}

/**
 * The last committed checkpoint restores to what the shards hold: its manifest's state, with
 * the deltas each shard recorded since, is every key's committed state. A manifest written
 * from a stale cut, or a rollback from the wrong base, breaks this even when the output
 * happens to come out right.
 */
async function restoreProblems(
  plan: Plan,
  committed: number,
  store: SimulatedShardStore,
  snapshots: SnapshotStore,
  shards: readonly ShardTarget[],
): Promise<string[]> {
  const manifest = committed > 0 ? await readManifest(snapshots, checkpointManifestKey(committed)) : undefined;
  if (committed > 0 && !manifest) return [`checkpoint ${committed} is committed but has no manifest`];
  const problems: string[] = [];
  for (const target of shards) {
    const shard = shardRefOf(plan, target);
    const progress = runtimeProgressOf((await store.inspect(shard))?.progress);
    const base = manifest?.shards.find((entry) => sameShard(entry, target))?.state ?? [];
    const since = progress.deltas.filter((delta) => delta.checkpoint > committed).map((delta) => delta.object);
    const restored = await readShardState(snapshots, [...base, ...since], plan.maxParallelism);
    const held = store.committedState(shard);
    const keys = new Set([...restored.keys(), ...held.keys()]);
    const differing = [...keys].filter((key) => JSON.stringify(restored.get(key)?.state) !== JSON.stringify(held.get(key)));
    if (differing.length > 0) {
      problems.push(
        `${target.stageId}/${target.topic}/${target.partition}: checkpoint ${committed} restores ${differing.length} keys ` +
          `to other state than the shard holds (first: ${differing[0]})`,
      );
    }
  }
  return problems;
}

/** A key's results are written in order: each window after the one before it. */
function keyOrderProblems(records: readonly KafkaRecord[]): string[] {
  const last = new Map<string, number>();
  const problems: string[] = [];
  for (const record of records) {
    const total = JSON.parse(record.value?.toString() ?? 'null') as Total;
    const key = `${record.partition}/${record.key?.toString() ?? ''}`;
    const previous = last.get(key);
    if (previous !== undefined && total.windowStart <= previous) problems.push(`key ${key}: window ${total.windowStart} written after ${previous}`);
    last.set(key, total.windowStart);
  }
  return problems;
}
