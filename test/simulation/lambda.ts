// Lambda as the simulation runs it: an event-source mapping per shard that polls, delivers,
// redelivers, cuts and duplicates batches and backs off after failures; the coordinator's
// schedule, which EventBridge may deliver twice or hold back for seconds; the coordinator's
// asynchronous ticks; and the commit function it starts. Each invocation is an actor of the
// scheduler, running the real processor, coordinator and commit function.
import { decodeKafkaEvent, type KafkaEventSource } from '../../lib/aws/kafka-event.js';
import type { KafkaRecord } from '../../lib/kafka/records.js';
import { mskEvent, selfManagedKafkaEvent } from '../../lib/offline/msk-event.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import type { Processor } from '../../lib/runtime/processor.js';
import { listShards, runtimeProgressOf, shardRefOf, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { sameShard } from '../../lib/snapshot/checkpoint-state.js';
import { countFailure, processorOf, type World } from './twins.js';

const INVOCATION_TIMEOUT_MS = 30_000;
const POLL_EVERY_MS = 300;

/** Lambda's event-source mapping for one shard: its position, the batch in flight, and its backoff after failures. */
export interface Mapping {
  readonly target: ShardTarget;
  position: number;
  inFlight: { readonly startedAt: number; settled: boolean } | undefined;
  nextPollAt: number;
  failures: number;
}

export class LambdaEnvironment {
  readonly processor: Processor;
  shards: ShardTarget[] = [];
  mappings: Mapping[] = [];
  /** The triggers (mappings and the coordinator's schedule) are off while the operator restores. */
  triggersOff = false;
  private readonly coordinatorEvery: number;
  private nextCoordinatorAt: number;

  constructor(private readonly world: World) {
    this.processor = processorOf(world, () => void this.coordinate());
    this.coordinatorEvery = Math.max(100, Math.min(1_000, Math.floor(world.plan.checkpointing.intervalMs / 4)));
    this.nextCoordinatorAt = world.sim.now;
  }

  /** The shards as the source topics have them now; each new one gets a mapping that starts at its partition's beginning. */
  async reshard(): Promise<void> {
    const { world } = this;
    this.shards = await world.sim.outside(() => listShards(world.plan, world.kafka.admin));
    this.addMappings(this.shards);
  }

  /** Mappings for shards that have none. */
  addMappings(shards: readonly ShardTarget[]): void {
    const fresh = shards.filter((target) => !this.mappings.some((mapping) => sameShard(mapping.target, target)));
    this.mappings = [...this.mappings, ...fresh.map((target) => ({ target, position: 0, inFlight: undefined, nextPollAt: this.world.sim.now, failures: 0 }))];
  }

  /** Whether a delivery is still on its way. */
  delivering(): boolean {
    return this.mappings.some((mapping) => mapping.inFlight && !mapping.inFlight.settled);
  }

  /** What the triggers do at this moment of simulated time: mappings poll, and the coordinator's schedule fires. */
  async act(): Promise<void> {
    const { sim, streams, counts } = this.world;
    for (const mapping of this.triggersOff ? [] : this.mappings) {
      const busy = mapping.inFlight && !mapping.inFlight.settled && sim.now - mapping.inFlight.startedAt < INVOCATION_TIMEOUT_MS;
      if (busy || sim.now < mapping.nextPollAt) continue;
      mapping.nextPollAt = sim.now + POLL_EVERY_MS;
      await this.deliver(mapping);
    }
    if (sim.now >= this.nextCoordinatorAt) {
      // Now and then the schedule stops for seconds (throttled concurrency, an outage): the
      // transactions it should commit may time out meanwhile.
      const outage = this.faulty() && streams.faults() < 0.02;
      counts.outages += outage ? 1 : 0;
      this.nextCoordinatorAt = sim.now + (outage ? 3_000 + Math.floor(streams.faults() * 6_000) : this.coordinatorEvery);
      // EventBridge may deliver a schedule twice.
      const runs = this.faulty() && streams.faults() < 0.1 ? 2 : 1;
      for (let i = 0; i < runs; i++) void this.coordinate();
    }
  }

  private faulty(): boolean {
    const { faults } = this.world.sim;
    return faults.crash > 0 || faults.stall > 0;
  }

  private invoke(target: ShardTarget, records: KafkaRecord[], label: string) {
    const { sim, store, plan, counts, traced } = this.world;
    counts.invocations++;
    return sim.spawn(`${label} ${target.stageId}/${target.partition}`, async () => {
      const report = await this.processor.processShard(target.stageId, target.topic, target.partition, records);
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
  }

  private async deliver(mapping: Mapping): Promise<void> {
    const { sim, kafka, config, streams } = this.world;
    const { target } = mapping;
    // Lambda's poller reads the log as the world, not as an actor the scheduler answers.
    const poll = await sim.outside(() => kafka.reader.readAvailable(target.topic, target.partition, mapping.position, config.maxBatch));
    if (poll.records.length === 0) return;
    let records = poll.records;
    // Lambda's poller may cut a batch where it likes: the processor fills the gap from the log.
    if (this.faulty() && records.length > 2 && streams.faults() < 0.1) records = records.slice(1 + Math.floor(streams.faults() * (records.length - 1)));
    records = throughEvent(records, config.eventSource);
    const attempt = { startedAt: sim.now, settled: false };
    mapping.inFlight = attempt;
    const run = (label: string) =>
      this.invoke(target, records, label).then(
        () => {
          mapping.failures = 0;
          // A redelivery now and then: the mapping forgets that the batch succeeded.
          if (!(this.faulty() && streams.faults() < 0.1)) mapping.position = Math.max(mapping.position, poll.next);
        },
        (error: unknown) => {
          countFailure(this.world, error);
          // The mapping retries the whole batch, backing off as Lambda does.
          mapping.failures++;
          mapping.nextPollAt = sim.now + Math.min(200 * 2 ** mapping.failures, 5_000);
        },
      );
    // A duplicate delivery of the same batch, at once.
    const runs = this.faulty() && streams.faults() < 0.08 ? [run('delivery'), run('duplicate')] : [run('delivery')];
    void Promise.all(runs).then(() => {
      attempt.settled = true;
    });
  }

  /** One run of the coordinator function, as its schedule or a batch that found it resting starts it. */
  coordinate(): Promise<void> {
    const { sim, plan, store, coordinatorStore, snapshots, config, counts, traced, streams } = this.world;
    return sim
      .spawn('coordinator run', async () => {
        // A stopped pipeline's schedule is off, and a batch that calls the coordinator starts nothing.
        if (this.triggersOff) return;
        const tick = async (target: ShardTarget) => {
          // On AWS the tick is an asynchronous invocation; offline mode runs it in place.
          const ticked = this.invoke(target, [], 'tick').catch((error: unknown) => countFailure(this.world, error));
          if (streams.scheduling() < 0.5) await ticked;
        };
        const wasAsleep = (await coordinatorStore.inspect()).asleep === true;
        const { outcome, record } = await runCoordinator({
          plan,
          store,
          coordinator: coordinatorStore,
          shards: this.shards,
          tick,
          clock: sim.clock,
          snapshots,
          ...(config.tickGrace ? { tickAfterMs: this.coordinatorEvery } : {}),
        });
        if (outcome === 'completed') counts.checkpoints++;
        // Each rest but a schedule's last is ended by a batch that woke the coordinator.
        if (outcome === 'asleep' && !wasAsleep) counts.rests++;
        if (traced) sim.log(`coordinator ${outcome} ${JSON.stringify(record)}`);
        if (outcome === 'completed' || record.completed > record.committed) {
          const runs = this.faulty() && streams.faults() < 0.2 ? 2 : 1;
          for (let i = 0; i < runs; i++) void this.commit();
        }
      })
      .catch((error: unknown) => countFailure(this.world, error));
  }

  private commit(): Promise<void> {
    const { sim, plan, store, coordinatorStore, kafka, snapshots, counts, traced } = this.world;
    return sim
      .spawn('commit run', async () => {
        const report = await commitCompletedCheckpoints({ plan, store, coordinator: coordinatorStore, committer: kafka.committer, shards: this.shards, snapshots });
        counts.rollbacks += report.rollbacks.length;
        if (traced) sim.log(`commit ${JSON.stringify(report)}`);
      })
      .catch((error: unknown) => countFailure(this.world, error));
  }
}

const SIMULATED_CLUSTER = 'arn:aws:kafka:eu-west-1:123456789012:cluster/sim/00000000-0000-0000-0000-000000000000-1';

/** The records as the schedule's event source hands them to the function: in its event's shape, decoded as the processor handler decodes them. */
function throughEvent(records: readonly KafkaRecord[], eventSource: KafkaEventSource): KafkaRecord[] {
  const event = eventSource === 'aws:kafka' ? mskEvent(records, SIMULATED_CLUSTER, []) : selfManagedKafkaEvent(records, [], eventSource);
  return decodeKafkaEvent(event).partitions.flatMap((partition) => partition.records);
}
