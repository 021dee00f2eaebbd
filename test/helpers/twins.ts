// A pipeline on the simulation's twins (the in-memory Kafka, shard and coordinator stores), for
// scripted interleavings that hold one actor while the others move on.
import { planPipeline } from '../../lib/plan/planner.js';
import { listShards, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { Processor, type ProcessorOptions } from '../../lib/runtime/processor.js';
import { MemorySnapshotStore } from '../../lib/snapshot/memory-store.js';
import { MemoryCoordinatorStore, type CoordinatorRecord, type CoordinatorStore } from '../../lib/state/coordinator-store.js';
import { MemoryShardStore } from '../../lib/state/memory-shard-store.js';
import { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { orderTotalsPipeline, type OrderTotalsOptions } from './pipelines.js';

/** What the twins' pipeline reads of an order (the whole order is the record's value): its key, and its event time as the record's timestamp. */
interface TwinOrder {
  readonly category: string;
  readonly timestamp: number;
}

/**
 * The coordinator record as the processor reads it: counts the reads, and runs `afterRead`
 * (once) after a read, before the processor gets the record. Coordinator runs read `direct`.
 */
export class WatchedCoordinatorStore implements CoordinatorStore {
  reads = 0;
  afterRead: (() => Promise<void>) | undefined;

  constructor(readonly direct: CoordinatorStore) {}

  async get(): Promise<CoordinatorRecord> {
    const record = await this.direct.get();
    this.reads++;
    const act = this.afterRead;
    this.afterRead = undefined;
    await act?.();
    return record;
  }

  update(record: CoordinatorRecord): Promise<boolean> {
    return this.direct.update(record);
  }
}

/**
 * A pipeline on the simulation's twins, with a clock the test moves by hand. The processor reads
 * the coordinator record through `processorsView`; `coordinator` is the record itself.
 */
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
  const processorsView = new WatchedCoordinatorStore(coordinator);
  const processor = new Processor({ plan, store, coordinator: processorsView, kafka, clock, snapshots, ...processorOptions });
  const shards = await listShards(plan, kafka.admin);
  return { time, clock, kafka, plan, store, coordinator, processorsView, snapshots, processor, shards };
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
