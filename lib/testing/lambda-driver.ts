// Plays AWS Lambda's part for a pipeline runtime in tests and benchmarks: polls each shard's partition as
// the event source mapping does and hands the records to the processor handler, runs the
// coordinator on a schedule (its ticks invoke the processor, its commit the commit function).
import { seconds } from '../api/index.js';
import { CommittedRangeReader, KafkaAdmin } from '../kafka/index.js';
import { listShards } from '../runtime/shard-record.js';
import { nextCheckpointDueAt } from '../state/coordinator-store.js';
import { commitHandler, coordinatorHandler, processorHandler } from '../aws/handlers.js';
import type { PipelineRuntime } from '../aws/runtime.js';
import { selfManagedKafkaEvent } from '../offline/msk-event.js';

export class LambdaDriver {
  private readonly reader: CommittedRangeReader;
  private readonly admin: KafkaAdmin;
  private readonly positions = new Map<string, number>();
  private readonly commit: ReturnType<typeof commitHandler>;
  private readonly coordinator: ReturnType<typeof coordinatorHandler>;

  /**
   * `aroundInvocation` runs each processor invocation of `drain` (a benchmark counts the CPU
   * inside them, and leaves out the reads that stand for Lambda's poller).
   */
  constructor(
    private readonly runtime: PipelineRuntime,
    private readonly clock: { now: number },
    private readonly aroundInvocation: (invoke: () => Promise<unknown>) => Promise<unknown> = (invoke) => invoke(),
  ) {
    this.reader = new CommittedRangeReader(runtime.config.kafka);
    this.admin = new KafkaAdmin(runtime.config.kafka);
    this.commit = commitHandler(runtime);
    this.coordinator = coordinatorHandler(
      runtime,
      async (target) => {
        await processorHandler(runtime, target.stageId)({ sluice: 'tick', ...target });
      },
      async () => {
        await this.commit();
      },
      () => clock.now,
    );
  }

  /** Delivers every record available now (or `rounds` batches a partition), in batches of at most `batchSize` per partition. */
  async drain(batchSize = 500, rounds = Infinity): Promise<number> {
    let total = 0;
    for (let round = 0; round < rounds; round++) {
      let delivered = 0;
      for (const target of await listShards(this.runtime.plan, this.admin)) {
        const id = `${target.topic}-${target.partition}`;
        const poll = await this.reader.readAvailable(target.topic, target.partition, this.positions.get(id) ?? 0, batchSize);
        this.positions.set(id, poll.next);
        if (poll.records.length === 0) continue;
        delivered += poll.records.length;
        const event = selfManagedKafkaEvent(poll.records, this.runtime.config.kafka.brokers);
        await this.aroundInvocation(() => processorHandler(this.runtime, target.stageId)(event));
        this.clock.now += 500;
      }
      total += delivered;
      if (delivered === 0) return total;
    }
    return total;
  }

  /**
   * Runs the coordinator (and so the commit function) until a checkpoint triggered now is
   * committed, or the pipeline rests: then everything it processed is committed already. Each
   * run comes 10 s after the last; `onTime` runs the first when the next checkpoint is due and
   * each other a millisecond later, as a coordinator on its schedule would, so that batches
   * after it find the next checkpoint due only once its interval has passed again.
   */
  async checkpoint({ onTime = false }: { readonly onTime?: boolean } = {}): Promise<number> {
    const before = await this.runtime.coordinator.get();
    const target = before.triggered + 1;
    if (onTime) this.clock.now = Math.max(this.clock.now, nextCheckpointDueAt(before, this.runtime.plan.checkpointing));
    for (let round = 0; round < 10; round++) {
      this.clock.now += onTime ? (round === 0 ? 0 : 1) : seconds(10);
      await this.coordinator();
      const record = await this.runtime.coordinator.get();
      if (record.committed >= target || record.asleep) return record.committed;
    }
    throw new Error(`checkpoint ${target} did not commit in 10 coordinator runs`);
  }

  async close(): Promise<void> {
    await this.reader.close();
    await this.admin.close();
  }
}
