// The world one schedule runs in: its seeded streams, the scheduler, the twins of Kafka,
// DynamoDB and S3, the pipeline's plan and the real processor, and what the schedule counts and
// finds. The parts of the world (lambda.ts, operator.ts, stopping.ts, checks.ts) each take it.
import { BadRecordPolicy, WatermarkEmission } from '../../lib/api/index.js';
import type { Plan } from '../../lib/plan/plan.js';
import { planPipeline } from '../../lib/plan/planner.js';
import { Processor } from '../../lib/runtime/processor.js';
import { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { SCHEDULE_KINDS } from '../helpers/order-totals-kinds.js';
import { seededRandom } from '../helpers/orders.js';
import { orderTotalsPipeline } from '../helpers/pipelines.js';
import { OnlineChecks } from './checks.js';
import type { ScheduleConfig } from './schedule.js';
import { Scheduler } from './scheduler.js';
import { SimulatedCoordinatorStore, SimulatedShardStore, SimulatedSnapshotStore } from './stores.js';

export const START = Date.UTC(2026, 11, 1, 9, 0, 0);
export const IDLENESS_MS = 5_000;
export const OUTPUT_PARTITIONS = 2;

/**
 * The seed's streams, one per kind of draw: a workload change (how the producers batch their
 * records) leaves the order of the answers and the faults as they were, and each of those the
 * others (the scheduler takes `scheduling` and `faults`).
 */
export interface Streams {
  readonly scheduling: () => number;
  readonly faults: () => number;
  readonly workload: () => number;
}

export function streamsOf(seed: number): Streams {
  return { scheduling: seededRandom(seed), faults: seededRandom(seed * 2_654_435 + 1), workload: seededRandom(seed * 40_503 + 9) };
}

export interface Counts {
  invocations: number;
  rollbacks: number;
  checkpoints: number;
  rests: number;
  outages: number;
  restores: number;
  nestedAborts: number;
  /** Malformed orders dead-lettered; stragglers written to the late output, and those the watermark let count. */
  deadLetters: number;
  lateOrders: number;
  stragglersCounted: number;
  errors: Record<string, number>;
}

export interface World {
  readonly config: ScheduleConfig;
  readonly streams: Streams;
  readonly sim: Scheduler;
  readonly traced: boolean;
  /**
   * The pipeline's name; its input topic is `${name}-orders`, its output `${name}-out`, and with
   * bad input its dead letters `${name}-dlq` and its late orders `${name}-late`.
   */
  readonly name: string;
  readonly input: string;
  readonly plan: Plan;
  readonly kafka: KafkaTwin;
  readonly store: SimulatedShardStore;
  readonly coordinatorStore: SimulatedCoordinatorStore;
  readonly snapshots: SimulatedSnapshotStore;
  readonly checks: OnlineChecks;
  readonly counts: Counts;
  /** What broke; empty when every invariant held. */
  readonly problems: string[];
}

/** Builds the world of a schedule, its topics created; the processor is built by whoever runs Lambda (lambda.ts). */
export function buildWorld(config: ScheduleConfig, traced: boolean): World {
  const streams = streamsOf(config.seed);
  const sim = new Scheduler(streams, START, traced);
  sim.faults = { ...config.faults, kafkaErrors: config.kafkaErrors };
  const name = `sim-${config.seed}`;
  const input = `${name}-orders`;
  const checks = new OnlineChecks();
  const kafka = new KafkaTwin({ clock: sim.clock, io: sim.io('kafka'), maxProducerEpoch: config.maxProducerEpoch });
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
      ...(config.badInput ? { badRecordPolicy: BadRecordPolicy.deadLetter(`${name}-dlq`), lateOutput: `${name}-late` } : {}),
    }),
  );
  kafka.createTopic(input, config.partitions);
  for (const output of config.badInput ? ['out', 'dlq', 'late'] : ['out']) kafka.createTopic(`${name}-${output}`, OUTPUT_PARTITIONS);
  for (const stage of plan.stages) if (stage.input.kind === 'repartition') kafka.createTopic(stage.input.topic, stage.input.partitions);
  return {
    config,
    streams,
    sim,
    traced,
    name,
    input,
    plan,
    kafka,
    store: new SimulatedShardStore(sim.io('dynamodb'), config.packing, checks),
    coordinatorStore: new SimulatedCoordinatorStore(sim.io('dynamodb'), checks),
    // Object ids from a stream of their own, so that they change no other draw.
    snapshots: new SimulatedSnapshotStore(sim.io('s3'), plan.maxParallelism, seededRandom(config.seed * 8_111 + 5)),
    checks,
    counts: { invocations: 0, rollbacks: 0, checkpoints: 0, rests: 0, outages: 0, restores: 0, nestedAborts: 0, deadLetters: 0, lateOrders: 0, stragglersCounted: 0, errors: {} },
    problems: [],
  };
}

/** The processor as every invocation of the schedule shares it: one container's, as offline mode runs it. */
export function processorOf(world: World, callCoordinator: () => void): Processor {
  return new Processor({
    plan: world.plan,
    store: world.store,
    coordinator: world.coordinatorStore,
    kafka: world.kafka,
    clock: world.sim.clock,
    snapshots: world.snapshots,
    transactionPoolSize: world.config.transactionPoolSize,
    limits: world.config.limits,
    // As on AWS, an asynchronous invocation of the coordinator when a batch finds it resting.
    callCoordinator: () => {
      callCoordinator();
      return Promise.resolve();
    },
  });
}

/** Counts a failed actor by its error's name; what is not a crash goes to the trace too. */
export function countFailure(world: World, error: unknown): void {
  const errorName = error instanceof Error ? error.name : 'unknown';
  world.counts.errors[errorName] = (world.counts.errors[errorName] ?? 0) + 1;
  if (errorName !== 'Crash') world.sim.log(`failed: ${error instanceof Error ? error.message : String(error)}`);
}
