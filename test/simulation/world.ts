// One simulated schedule of the whole serverless runtime: the real processor, coordinator,
// commit function and rollback, driven in one process against the DynamoDB, S3 and Kafka
// twins, with a seeded scheduler deciding every interleaving and fault, in the shape of
// TigerBeetle's VOPR: the schedule's draw (schedule.ts), the world and its streams (twins.ts),
// Lambda's triggers (lambda.ts), the operator (operator.ts), the stopping rule (stopping.ts)
// and the checker (checks.ts), online after every write and at the end. After the faults
// stop, everything must finish, and the read_committed output must equal a plain computation.
import { runtimeProgressOf, shardRefOf } from '../../lib/runtime/shard-record.js';
import { closingOrders, closingOrdersOnEveryPartition, generateOrders, seededRandom, type GeneratedOrder } from '../helpers/orders.js';
import { finalProblems, namedByAShard, type ProducedInput } from './checks.js';
import { LambdaEnvironment } from './lambda.js';
import { Operator } from './operator.js';
import type { ScheduleConfig } from './schedule.js';
import type { Scheduler } from './scheduler.js';
import { inputRead, StoppingRule } from './stopping.js';
import { buildWorld, START, type Counts, type World } from './twins.js';

export interface SimulationResult {
  readonly config: ScheduleConfig;
  /** What broke; empty when every invariant held. */
  readonly problems: string[];
  readonly steps: number;
  readonly counts: Scheduler['counts'] & Counts;
  readonly trace: string[];
}

const PRODUCE_EVERY_MS = 400;
/** How far behind its place in the stream a straggler is stamped: more than a window and the out-of-orderness bound. */
const STRAGGLER_BEHIND_MS = 420_000;

function orderJson(order: GeneratedOrder): string {
  return JSON.stringify({ orderId: order.orderId, category: order.category, amount: order.amount, timestamp: order.timestamp });
}

/**
 * The orders with the schedule's bad input: some not JSON (the order's start, cut off), some
 * stamped minutes behind. Drawn from a stream of its own; the first ten orders stay as they
 * are, so that a straggler's partition has often moved its watermark past it.
 */
function withBadInput(orders: readonly GeneratedOrder[], config: ScheduleConfig): { input: ProducedInput; values: Map<GeneratedOrder, string> } {
  const values = new Map<GeneratedOrder, string>();
  const produced: GeneratedOrder[] = [];
  const malformed: string[] = [];
  const stragglers = new Set<string>();
  const random = seededRandom(config.seed * 2_287 + 23);
  for (const [i, order] of orders.entries()) {
    const roll = config.badInput && i >= 10 ? random() : 1;
    if (roll < (config.badInput?.malformed ?? 0)) {
      const value = orderJson(order).slice(0, -12);
      malformed.push(value);
      values.set(order, value);
      continue;
    }
    const stamped = roll < (config.badInput?.malformed ?? 0) + (config.badInput?.stragglers ?? 0) ? { ...order, timestamp: order.timestamp - STRAGGLER_BEHIND_MS } : order;
    if (stamped !== order) stragglers.add(order.orderId);
    produced.push(stamped);
    values.set(stamped, orderJson(stamped));
  }
  return { input: { orders: produced, malformed, stragglers }, values };
}

/** The orders a schedule produces, and the producers that write them a few at a time, as the workload stream draws. */
class Producers {
  readonly input: ProducedInput;
  private readonly records: { topic: string; partition?: number; key: string; value: string; timestamp: number }[];
  /** How many of the records, at the end, are closing orders. */
  private readonly closing: number;
  private produced = 0;
  private nextAt: number;

  constructor(
    private readonly world: World,
    private readonly operator: Operator,
  ) {
    const { config, input, sim } = world;
    const { restore } = config;
    const active = config.idlePartition ? config.partitions - 1 : config.partitions;
    // Restored schedules spread more categories, so that a grown source moves some of them.
    const categories = Math.max(active, restore ? 8 : 4);
    const generated = generateOrders({ count: config.orders, seed: config.seed, categories, start: START - 600_000, spacingMs: 8_000 });
    const { input: produced, values } = withBadInput(generated, config);
    this.input = produced;
    const closing = restore ? closingOrdersOnEveryPartition(generated, operator.finalPartitions) : closingOrders(generated, active);
    for (const order of closing) values.set(order, orderJson(order));
    this.closing = closing.length;
    this.records = [...values].map(([order, value]) => ({
      topic: input,
      // Unless a restore may grow the source, partition n takes category n (and n + active, ...).
      ...(restore ? {} : { partition: Number(order.category.split('-')[1]) % active }),
      key: order.category,
      value,
      timestamp: order.timestamp,
    }));
    this.nextAt = sim.now;
  }

  get done(): boolean {
    return this.produced === this.records.length;
  }

  act(): void {
    const { sim, kafka, streams } = this.world;
    // The closing orders are keyed for the grown source's partitions: written before it grows,
    // one meant for a new partition's number would land on an old one, and leave a partition
    // with open windows and nothing to close them.
    const producible = this.operator.holdsGrowthRecords ? this.records.length - this.closing : this.records.length;
    while (this.operator.producing && this.produced < producible && sim.now >= this.nextAt) {
      const until = Math.min(producible, this.produced + 1 + Math.floor(streams.workload() * 6));
      kafka.append(this.records.slice(this.produced, until));
      this.produced = until;
      this.nextAt += PRODUCE_EVERY_MS;
    }
  }
}

/**
 * A transaction a committed shard record names is the shard's output: only a broker may lose it
 * (a timeout, a newer producer of its id). One that an EndTxn(abort) ended was aborted by an
 * actor that took its landed commit for fenced, and its rollback only hides the loss.
 */
function watchRollbackRequests(world: World): void {
  const { coordinatorStore, store, plan, kafka, problems } = world;
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
}

export async function simulate(config: ScheduleConfig, options: { trace?: boolean } = {}): Promise<SimulationResult> {
  const world = buildWorld(config, options.trace === true);
  const { sim, kafka, checks, problems } = world;
  const lambda = new LambdaEnvironment(world);
  await lambda.reshard();
  const operator = new Operator(world, lambda);
  const producers = new Producers(world, operator);
  const stopping = new StoppingRule(world, lambda);
  watchRollbackRequests(world);
  kafka.onCommitRequested = (handle) => void checks.transactionCommitted(handle, (named) => namedByAShard(world, named));
  /** Input all delivered and processed, no transaction open, the operator done. */
  const dataQuiet = async () => operator.done && producers.done && (await inputRead(world, lambda));

  for (let iteration = 0; ; iteration++) {
    producers.act();
    await lambda.act();
    if (!(await sim.step())) sim.now += 50;
    await operator.act(iteration);
    stopping.calmAfterFaults();
    if (await stopping.over(iteration, dataQuiet)) break;
  }
  while (!sim.idle) await sim.step();

  problems.push(...checks.problems, ...(await finalProblems(world, lambda.shards, producers.input)));
  await lambda.processor.close();
  return { config, problems, steps: sim.steps, counts: { ...world.counts, ...sim.counts }, trace: sim.trace };
}
