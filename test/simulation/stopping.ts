// When a schedule is over: after its fault phase, once the input is all read and every source
// partition that turns idle has acknowledged idle, and then enough checkpoints have committed to
// pass the watermark through every stage, or the coordinator rests with nothing left; or, if
// that takes too long after the faults stopped, the schedule is stuck.
import { hasUncommittedWork, restingState } from '../../lib/runtime/quiescence.js';
import { rollbacksPending } from '../../lib/runtime/rollback-requests.js';
import { runtimeProgressOf, shardRefOf, type RuntimeProgress, type ShardTarget } from '../../lib/runtime/shard-record.js';
import type { CoordinatorRecord } from '../../lib/state/coordinator-store.js';
import type { LambdaEnvironment } from './lambda.js';
import { IDLENESS_MS, type World } from './twins.js';

/**
 * After the faults, how many requests everything may take to finish before the schedule counts
 * as stuck: per stage, since each stage's shards, batches and checkpoint acknowledgements make
 * requests of their own, and a watermark passes one stage a checkpoint; no fewer than a two-stage
 * pipeline's 40,000. (A three-stage schedule with small catch-up limits, seed 6876 of a
 * 10,000-schedule run, still wrote output 160 s after the faults and would rest 30 s after the
 * two-stage budget ran out.)
 */
function calmStepLimit(stages: number): number {
  return Math.max(40_000, 20_000 * stages);
}
/**
 * And how long, in simulated time: 90 s a stage, no less than a two-stage pipeline's 180 s, and
 * far less than the default 15-minute transaction timeout, so that a transaction left open until
 * the broker times it out (a zombie's) counts as stuck.
 */
function calmTimeLimitMs(stages: number): number {
  return Math.max(180_000, 90_000 * stages);
}

/** What was produced so far all delivered and processed, no transaction open. */
export async function inputRead({ kafka, store, plan, sim }: World, lambda: LambdaEnvironment): Promise<boolean> {
  if (kafka.openTransactions().length > 0) return false;
  for (const { target } of lambda.mappings) {
    const progress = runtimeProgressOf((await store.inspect(shardRefOf(plan, target)))?.progress);
    const left = await sim.outside(() => kafka.reader.readAvailable(target.topic, target.partition, progress.offset ?? 0, 1));
    if (left.records.length > 0) return false;
  }
  return true;
}

/**
 * The rest is what it found: no delivery in flight, every shard past its log's last record,
 * nothing to commit, and the shards as the coordinator saw them when it went to rest (all read
 * without faults). A batch that committed since has called the coordinator, whose run wakes it.
 */
export async function restHolds({ kafka, store, plan }: World, lambda: LambdaEnvironment, record: CoordinatorRecord): Promise<boolean> {
  if (lambda.delivering()) return false;
  const progress = new Map<ShardTarget, RuntimeProgress | undefined>();
  for (const { target } of lambda.mappings) {
    const shard = (await store.inspect(shardRefOf(plan, target)))?.progress;
    progress.set(target, shard === undefined ? undefined : runtimeProgressOf(shard));
    const offset = progress.get(target)?.offset ?? 0;
    if (kafka.committedRecords(target.topic).some((r) => r.partition === target.partition && r.offset >= offset)) return false;
  }
  return restingState(plan, progress, record.completedWatermarks) === record.resting?.state && !hasUncommittedWork(progress, record.committed);
}

/**
 * Every source shard that turns idle has acknowledged idle. Its idleness counts from its first
 * invocation, which a coordinator outage can hold back well past the input's end.
 */
async function sourcesTurnedIdle({ store, plan }: World, lambda: LambdaEnvironment): Promise<boolean> {
  for (const { target } of lambda.mappings) {
    const stage = plan.stages.find((s) => s.id === target.stageId);
    if (stage?.input.kind !== 'source' || stage.input.source.watermarks.idlenessMs === undefined) continue;
    if (runtimeProgressOf((await store.inspect(shardRefOf(plan, target)))?.progress).acknowledgedIdle !== true) return false;
  }
  return true;
}

export class StoppingRule {
  private calmSince: number | undefined;
  private calmAt = 0;
  /**
   * When the data went quiet, the checkpoint committed by then, and how many commits were seen
   * since: what follows must finish in a few checkpoints. Counted as commits seen, not by
   * checkpoint number: abandoned checkpoints make the numbers jump, and a commit that jumped
   * from 3 to 10 passed the watermark on once, not seven times (found by seed 2820).
   */
  private quiet: { at: number; committed: number | undefined; commits: number } | undefined;

  constructor(
    private readonly world: World,
    private readonly lambda: LambdaEnvironment,
  ) {}

  /** Ends the fault phase once its requests are answered. */
  calmAfterFaults(): void {
    const { sim, config } = this.world;
    if (this.calmSince !== undefined || sim.steps < config.faultSteps) return;
    sim.calm();
    this.calmSince = sim.steps;
    this.calmAt = sim.now;
  }

  /**
   * Whether the schedule is over (judged every 20 iterations once calm): `dataQuiet` says the
   * input is all produced, read and processed, and the operator is done.
   */
  async over(iteration: number, dataQuiet: () => Promise<boolean>): Promise<boolean> {
    const { sim, coordinatorStore, plan, problems, kafka } = this.world;
    const { calmSince } = this;
    if (calmSince === undefined || iteration % 20 !== 0) return false;
    const record = await coordinatorStore.inspect();
    // A rollback still to do has output still to write, however many checkpoints commit meanwhile.
    if (!rollbacksPending(record) && (await dataQuiet())) {
      const quiet = (this.quiet ??= { at: sim.now, committed: undefined, commits: 0 });
      // Once the idle partitions have turned idle, each stage needs a checkpoint or two to pass the watermark on.
      if (quiet.committed === undefined && sim.now - quiet.at >= IDLENESS_MS && (await sourcesTurnedIdle(this.world, this.lambda))) quiet.committed = record.committed;
      else if (quiet.committed !== undefined && record.committed > quiet.committed) {
        quiet.committed = record.committed;
        quiet.commits++;
      }
      if (quiet.commits >= plan.stages.length + 2) return true;
      // At rest, the coordinator triggers no more checkpoints: what it left must be the whole
      // output, once no invocation is still on its way (a stalled one wakes it when it commits).
      if (record.asleep && (await restHolds(this.world, this.lambda, record))) return true;
    } else {
      this.quiet = undefined;
    }
    const stepLimit = calmStepLimit(plan.stages.length);
    const timeLimitMs = calmTimeLimitMs(plan.stages.length);
    if (sim.steps - calmSince > stepLimit || sim.now - this.calmAt > timeLimitMs) {
      problems.push(
        `did not finish within ${stepLimit} requests or ${timeLimitMs / 1000} s after the faults stopped: ` +
          `checkpoints triggered ${record.triggered}, ` +
          `completed ${record.completed}, committed ${record.committed}; open transactions ${kafka.openTransactions().join(', ') || 'none'}`,
      );
      return true;
    }
    return false;
  }
}
