// A pipeline on the simulation's twins (the in-memory Kafka, shard and coordinator stores), for
// scripted interleavings that hold one actor while the others move on.
import { planPipeline } from '../../lib/plan/planner.js';
import { listShards } from '../../lib/runtime/coordinator.js';
import { Processor, type ProcessorOptions } from '../../lib/runtime/processor.js';
import { MemorySnapshotStore } from '../../lib/snapshot/memory-store.js';
import { MemoryCoordinatorStore } from '../../lib/state/coordinator-store.js';
import { MemoryShardStore } from '../../lib/state/memory-shard-store.js';
import { KafkaTwin } from '../../lib/testing/kafka-twin.js';
import { orderTotalsPipeline, type OrderTotalsOptions } from './pipelines.js';

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

