// The operator of a schedule that restores mid-run: once the fault phase is far enough along, it
// stops the triggers (first letting the pipeline catch up, with the producers paused, to grow the
// source or under per-batch output commit), takes a savepoint, grows the source if the schedule
// says so, restores the savepoint, and starts the triggers again — and runs it all again, as an
// operator would, when a crash or a refusal stops it.
import { OutputCommit } from '../../lib/api/index.js';
import { wakeCoordinator } from '../../lib/runtime/quiescence.js';
import { rollbacksPending } from '../../lib/runtime/rollback-requests.js';
import { OutputPastSnapshotError, RestoreInterruptedError, restoreSnapshot, SavepointNotReadyError, writeSavepoint } from '../../lib/runtime/savepoints.js';
import { listShards, type ShardTarget } from '../../lib/runtime/shard-record.js';
import type { LambdaEnvironment } from './lambda.js';
import { Crash, KafkaRequestRefused, KafkaRequestTimedOut, ServiceUnavailable } from './scheduler.js';
import { inputRead, restHolds } from './stopping.js';
import { countFailure, type World } from './twins.js';

/** Where a schedule that restores stands: it stops its triggers, restores, and starts them again. */
type RestorePhase = 'before' | 'catching up' | 'stopped' | 'restoring' | 'done';

export class Operator {
  private phase: RestorePhase;
  /** The latest checkpoint triggered when the input was found read, until it is found unread again. */
  private caughtUpAt: number | undefined;
  private grown = false;
  private attempts = 0;
  private notBefore: number;

  constructor(
    private readonly world: World,
    private readonly lambda: LambdaEnvironment,
  ) {
    const { restore, faultSteps } = world.config;
    this.phase = restore ? 'before' : 'done';
    this.notBefore = Math.floor(faultSteps * (restore?.at ?? 1));
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** The source's partitions once the operator is done. */
  get finalPartitions(): number {
    const { config } = this.world;
    return config.partitions + (config.restore?.addPartitions ?? 0);
  }

  /**
   * Whether the operator pauses the producers and lets the pipeline catch up before the
   * savepoint: to grow the source, and with per-batch output commit, whose output is visible
   * before its checkpoint, so that a savepoint must wait for a checkpoint that covers it all.
   */
  private get pausesInput(): boolean {
    const { restore, outputCommit } = this.world.config;
    return restore !== undefined && (restore.addPartitions > 0 || outputCommit === OutputCommit.PER_BATCH);
  }

  /** Producers pause from catching up to the restore, while a source is grown or output is committed per batch. */
  get producing(): boolean {
    return this.phase === 'before' || this.phase === 'done' || !this.pausesInput;
  }

  /** Whether records meant for the grown source's new partitions must wait: written before it grows, they would land on old ones. */
  get holdsGrowthRecords(): boolean {
    return (this.world.config.restore?.addPartitions ?? 0) > 0 && this.phase !== 'done';
  }

  private enter(phase: RestorePhase): void {
    this.phase = phase;
    this.lambda.triggersOff = phase === 'stopped' || phase === 'restoring';
  }

  /** Stops the triggers (once the input is read and committed, to grow the source), restores, and starts them again. */
  async act(iteration: number): Promise<void> {
    const { sim, coordinatorStore, plan } = this.world;
    if (this.phase === 'done') return;
    // A savepoint needs a committed checkpoint to save.
    if (this.phase === 'before' && sim.steps >= this.notBefore && (await coordinatorStore.inspect()).committed > 0) {
      this.enter(this.pausesInput ? 'catching up' : 'stopped');
    }
    if (this.phase === 'catching up' && iteration % 20 === 0) {
      const record = await coordinatorStore.inspect();
      if (rollbacksPending(record) || !(await inputRead(this.world, this.lambda))) this.caughtUpAt = undefined;
      // A checkpoint triggered after the input was read, and one more per later stage, or a rest,
      // which holds only once checkpoints cover it all. A checkpoint triggered before the read
      // was done may have been acknowledged before it, and not cover it.
      else if (record.committed >= (this.caughtUpAt ??= record.triggered) + plan.stages.length || (record.asleep && (await restHolds(this.world, this.lambda, record)))) {
        this.enter('stopped');
      }
    }
    // Deliveries still running are fenced by the restore's claims; a commit run still running could commit past the savepoint.
    if (this.phase === 'stopped' && !sim.runs(['coordinator', 'commit'])) {
      this.enter('restoring');
      this.restore();
    }
  }

  private restore(): void {
    const { sim, plan, store, coordinatorStore, kafka, snapshots, traced, input, problems, counts } = this.world;
    const add = this.world.config.restore?.addPartitions ?? 0;
    this.attempts++;
    const savepoint = `mid-run-${this.attempts}`;
    sim
      .spawn('restore run', async () => {
        const before = { plan, store, coordinator: coordinatorStore, committer: kafka.committer, snapshots, clock: sim.clock };
        const saved = await writeSavepoint({ ...before, shards: this.lambda.shards }, savepoint);
        if (traced) sim.log(`savepoint ${savepoint} of checkpoint ${saved.checkpoint}`);
        // The operator adds them once, between the savepoint and the restore.
        if (add > 0 && !this.grown) {
          kafka.addPartitions(input, this.finalPartitions);
          this.grown = true;
        }
        const now = await listShards(plan, kafka.admin);
        const abortTransactionsOf = (target: ShardTarget) => this.lambda.processor.abortTransactionsOf(target);
        const report = await restoreSnapshot({ ...before, reader: kafka.reader, shards: now, abortTransactionsOf }, { savepoint });
        if (traced) sim.log(`restored ${savepoint}: ${JSON.stringify(report)}`);
        await wakeCoordinator(coordinatorStore, undefined);
        return now;
      })
      .then(
        (now) => {
          // Each new shard's trigger starts at its partition's beginning; the others go on where they were.
          this.lambda.addMappings(now);
          this.lambda.shards = now;
          counts.restores++;
          this.enter('done');
        },
        (error: unknown) => {
          countFailure(this.world, error);
          // Run again, as its operator would, unless it refused; or first let the triggers run a while.
          const transient = [Crash, ServiceUnavailable, KafkaRequestRefused, KafkaRequestTimedOut, RestoreInterruptedError].some((kind) => error instanceof kind);
          if (transient) this.enter('stopped');
          else if (error instanceof SavepointNotReadyError || error instanceof OutputPastSnapshotError) {
            this.enter('before');
            this.notBefore = sim.steps + 300;
          } else {
            problems.push(`the restore refused: ${error instanceof Error ? error.message : String(error)}`);
            this.enter('done');
          }
        },
      );
  }
}
