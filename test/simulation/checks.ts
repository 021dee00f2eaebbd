// What a schedule must hold. Online, as each write lands (OnlineChecks, which the stores and the
// Kafka twin call): epochs, acknowledgements and checkpoints never go back, and every transaction
// committed in Kafka is named by a committed shard record. At the end: the read_committed output
// equals a plain computation, nothing is left open or waiting, and the last committed
// checkpoint restores to what the shards hold.
import { DeliveryGuarantee } from '../../lib/kafka/delivery-guarantee.js';
import type { KafkaRecord } from '../../lib/kafka/records.js';
import { transactionKey, type TransactionHandle } from '../../lib/kafka/transaction-handle.js';
import type { Plan } from '../../lib/plan/plan.js';
import { deltaSource, runtimeProgressOf, shardRefOf, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { checkpointManifestKey, readManifest, readShardState, sameShard } from '../../lib/snapshot/checkpoint-state.js';
import type { SnapshotStore } from '../../lib/snapshot/snapshot-store.js';
import type { CoordinatorRecord } from '../../lib/state/coordinator-store.js';
import type { ShardRecord, ShardRef } from '../../lib/state/shard-store.js';
import type { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { compareOutput, expectedOutput } from '../helpers/order-totals-kinds.js';
import type { GeneratedOrder } from '../helpers/orders.js';
import type { Total } from '../helpers/pipelines.js';
import type { SimulatedShardStore } from './stores.js';
import { OUTPUT_PARTITIONS, type World } from './twins.js';

/** A shard record past this many bytes of JSON is on its way to DynamoDB's 400 KB item limit. */
const RECORD_SIZE_BUDGET = 64_000;

/**
 * The online checker's findings: what broke an invariant at the write that broke it, checked
 * after every write of a shard or coordinator record, rather than only at the end of a schedule.
 */
export class OnlineChecks {
  readonly problems: string[] = [];

  /** A shard record's epochs and acknowledgement never go back; a commit records a checkpoint acknowledged no earlier. */
  shardWritten(shard: ShardRef, before: ShardRecord | undefined, after: ShardRecord): void {
    if (!before) return;
    const where = `${shard.stage}/${shard.shard}`;
    if (after.epoch < before.epoch) this.problems.push(`${where}: epoch went back from ${before.epoch} to ${after.epoch}`);
    if (after.committedEpoch < before.committedEpoch) this.problems.push(`${where}: committed epoch went back from ${before.committedEpoch} to ${after.committedEpoch}`);
    const [was, is] = [runtimeProgressOf(before.progress).acknowledged, runtimeProgressOf(after.progress).acknowledged];
    if (is < was) this.problems.push(`${where}: acknowledged checkpoint went back from ${was} to ${is}`);
  }

  /**
   * A transaction committed in Kafka is one a committed shard record names: `named` says
   * whether any does, read as the commit request lands.
   */
  async transactionCommitted(handle: TransactionHandle, named: (handle: TransactionHandle) => Promise<boolean>): Promise<void> {
    if (!(await named(handle))) this.problems.push(`transaction ${handle.transactionalId} (producer ${handle.producerId}, epoch ${handle.producerEpoch}) was committed, and no committed shard record names it`);
  }

  /** The coordinator's checkpoints never go back, and stay ordered: committed ≤ completed ≤ triggered. */
  coordinatorWritten(before: CoordinatorRecord, after: CoordinatorRecord): void {
    const moved = `from ${JSON.stringify(checkpointsOf(before))} to ${JSON.stringify(checkpointsOf(after))}`;
    if (after.triggered < before.triggered || after.completed < before.completed || after.committed < before.committed) {
      this.problems.push(`the coordinator record's checkpoints went back ${moved}`);
    }
    if (!(after.committed <= after.completed && after.completed <= after.triggered)) this.problems.push(`the coordinator record's checkpoints are out of order ${moved}`);
  }
}

function checkpointsOf({ triggered, completed, committed }: CoordinatorRecord) {
  return { triggered, completed, committed };
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
    const since = progress.deltas.filter((delta) => delta.checkpoint > committed).map(deltaSource);
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

/** Whether a committed shard record names `handle` among its pending transactions. */
export function namedByAShard({ store }: World, handle: TransactionHandle): Promise<boolean> {
  for (const record of store.latestRecords()) {
    if (runtimeProgressOf(record.progress).pending.some((p) => transactionKey(p.handle) === transactionKey(handle))) return Promise.resolve(true);
  }
  return Promise.resolve(false);
}

/** What a schedule produces, as the checker judges it. */
export interface ProducedInput {
  /** The well-formed orders, stragglers with the time they were stamped with. */
  readonly orders: readonly GeneratedOrder[];
  /** The values of the records that are not JSON: each a dead letter. */
  readonly malformed: readonly string[];
  /** The ids of the orders stamped minutes behind: each counts in its window or goes to the late output, as the watermark finds it. */
  readonly stragglers: ReadonlySet<string>;
}

/**
 * The bad input's outputs: every malformed record dead-lettered once, and every order in the late
 * output a straggler, once. Returns the orders the results must count: those not late.
 */
function badInputProblems({ kafka, name, config, counts }: World, { orders, malformed, stragglers }: ProducedInput, problems: string[]): readonly GeneratedOrder[] {
  if (!config.badInput) return orders;
  const values = (topic: string) => kafka.committedRecords(`${name}-${topic}`).map((record) => record.value?.toString() ?? '');
  const deadLetters = values('dlq');
  const sorted = (list: readonly string[]) => JSON.stringify([...list].sort());
  if (sorted(deadLetters) !== sorted(malformed)) problems.push(`dead letters ${sorted(deadLetters)}, expected the malformed records ${sorted(malformed)}`);
  const late = new Set<string>();
  for (const { orderId } of values('late').map((value) => JSON.parse(value) as { orderId: string })) {
    if (!stragglers.has(orderId)) problems.push(`${orderId} written as late, but it was on time`);
    if (late.has(orderId)) problems.push(`${orderId} written as late twice`);
    late.add(orderId);
  }
  counts.deadLetters = deadLetters.length;
  counts.lateOrders = late.size;
  counts.stragglersCounted = stragglers.size - late.size;
  return orders.filter((order) => !late.has(order.orderId));
}

/** The checks at the end of a schedule, once every actor has stopped. */
export async function finalProblems(world: World, shards: readonly ShardTarget[], input: ProducedInput): Promise<string[]> {
  const { kafka, name, config, plan, store, coordinatorStore, snapshots, counts } = world;
  const problems: string[] = [];
  const out = kafka.committedRecords(`${name}-out`);
  counts.nestedAborts = nestedAbortedPairs(kafka, `${name}-out`);
  const written = out.map((record) => JSON.parse(record.value?.toString() ?? 'null') as Total);
  const counted = badInputProblems(world, input, problems);
  problems.push(...compareOutput(config.kind, written, expectedOutput(config.kind, counted)));
  // A sink keyed as its stage is keeps each key's results in order; after a second keyBy, two shards may write one sink key.
  if (config.kind === 'one-stage' || config.kind === 'sql-upsert') problems.push(...keyOrderProblems(out));
  if (kafka.openTransactions().length > 0) problems.push(`transactions left open: ${kafka.openTransactions().join(', ')}`);
  const record = await coordinatorStore.inspect();
  for (const target of shards) {
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
  problems.push(...snapshots.rewrites);
  problems.push(...(await restoreProblems(plan, record.committed, store, snapshots.unscheduled, shards)));
  if (plan.internalGuarantee !== DeliveryGuarantee.EXACTLY_ONCE) problems.push('the pipeline is not EXACTLY_ONCE');
  return problems;
}
