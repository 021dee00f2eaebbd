// A pipeline on the simulation's twins (the in-memory Kafka, shard and coordinator stores), for
// scripted interleavings that hold one actor while the others move on.
import { planPipeline } from '../../lib/plan/planner.js';
import { listShards, type ShardTarget } from '../../lib/runtime/coordinator.js';
import { Processor, type ProcessorOptions } from '../../lib/runtime/processor.js';
import { MemorySnapshotStore } from '../../lib/snapshot/memory-store.js';
import { MemoryCoordinatorStore } from '../../lib/state/coordinator-store.js';
import { MemoryShardStore } from '../../lib/state/memory-shard-store.js';
import { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { orderTotalsPipeline, type OrderTotalsOptions } from './pipelines.js';

/** What the twins' pipeline reads of an order (the whole order is the record's value): its key, and its event time as the record's timestamp. */
interface TwinOrder {
  readonly category: string;
  readonly timestamp: number;
}

/** A pipeline on the simulation's twins, with a clock the test moves by hand. */
export async function onTwins(options: Omit<OrderTotalsOptions, 'input' | 'brokers'>, processorOptions: Partial<ProcessorOptions> = {}) {
  const time = { now: Date.UTC(2026, 11, 1, 9, 0, 0) };
  const clock = () => time.now;
  const kafka = new KafkaTwin({ clock });
  const plan = planPipeline(orderTotalsPipeline({ ...options, input: 'orders', brokers: ['127.0.0.1:1'] }));
  kafka.createTopic('orders', 1);
  kafka.createTopic(`${options.name}-out`, 2);
  for (const stage of plan.stages) if (stage.input.kind === 'repartition') kafka.createTopic(stage.input.topic, stage.input.partitions);
  const store = new MemoryShardStore();
  const coordinator = new MemoryCoordinatorStore();
  const snapshots = new MemorySnapshotStore();
  const processor = new Processor({ plan, store, coordinator, kafka, clock, snapshots, ...processorOptions });
  const shards = await listShards(plan, kafka.admin);
  return { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards };
}


/** Appends orders to the twins' one source partition, keyed and stamped as a producer would, and returns their offsets. */
export function appendOrders(kafka: KafkaTwin, orders: readonly TwinOrder[]): number[] {
  return kafka.append(orders.map((o) => ({ topic: 'orders', partition: 0, key: o.category, value: JSON.stringify(o), timestamp: o.timestamp })));
}

/** Appends orders and hands them to the processor as one batch of the source's shard. */
export async function deliverOrders(kafka: KafkaTwin, processor: Processor, target: ShardTarget, orders: readonly TwinOrder[]) {
  const offsets = appendOrders(kafka, orders);
  const records = await kafka.reader.read({ topic: 'orders', partition: 0, from: offsets[0] ?? 0, to: (offsets.at(-1) ?? -1) + 1 });
  return processor.processShard(target.stageId, target.topic, 0, records);
}
