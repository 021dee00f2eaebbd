// The runtime end to end against the real broker, DynamoDB (dynalite) and S3 (s3rver):
// processor, coordinator and commit function drive a one-stage and a two-stage pipeline
// through crashes at every step, zombies, redeliveries, cut batches, concurrent coordinators
// and commit functions, DynamoDB and S3 faults; the read_committed output
// must equal what a plain loop computes (test/helpers/runtime-schedule.ts), with output committed
// at checkpoints or, in half the schedules, per batch (outputCommitOf), and a fifth of them
// restoring a savepoint mid-run. Each schedule is
// reproducible from its seed; `npm run chaos` runs many more, and test/disruptive restarts the
// broker during schedules.
import { describe, expect, it } from 'vitest';
import { OutputCommit } from '../../../lib/api/index.js';
import { PROCESSOR_STEPS } from '../../../lib/runtime/processor.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule, type ScheduleKind, type ScheduleResult } from '../../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();
const SCHEDULES = 100;
const results: ScheduleResult[] = [];

const seeds = Array.from({ length: SCHEDULES }, (_, i) => [i % 2 === 0 ? 'one-stage' : 'two-stage', 100 + i] as [ScheduleKind, number]);
/** A fifth of the schedules take a savepoint mid-run and restore it (both kinds, both output commits). */
const restores = (seed: number) => seed % 10 >= 8;

describe.concurrent('the serverless runtime, exactly once', () => {
  it.each(seeds)('%s pipeline, seed %i: exact read_committed output through injected faults', async (kind, seed) => {
    const result = await runSchedule(environment(), kind, seed, { orders: 600, restore: restores(seed) });
    results.push(result);
    expect(result.stages).toBe(kind === 'one-stage' ? 1 : 2);
    expect(result.problems, `seed ${seed}`).toEqual([]);
  }, 300_000);
});

describe('the fault schedules', () => {
  it(`covered every kind of fault across the ${SCHEDULES} schedules`, () => {
    expect(results).toHaveLength(SCHEDULES);
    const sum = (pick: (r: ScheduleResult) => number) => results.reduce((total, r) => total + pick(r), 0);
    // Only per-batch output commit, half the schedules, commits its own transaction after the shard's commit.
    for (const step of PROCESSOR_STEPS) {
      expect(sum((r) => r.crashes[step] ?? 0), `crashes after ${step}`).toBeGreaterThan(step === 'output-committed' ? 5 : 20);
    }
    expect(sum((r) => r.redelivered)).toBeGreaterThan(20);
    expect(sum((r) => r.cut)).toBeGreaterThan(20);
    expect(sum((r) => r.concurrent)).toBeGreaterThan(20);
    expect(sum((r) => r.dynamoFaults.throttled)).toBeGreaterThan(100);
    expect(sum((r) => r.dynamoFaults.ambiguous)).toBeGreaterThan(100);
    expect(sum((r) => r.s3Faults.throttled + r.s3Faults.ambiguous)).toBeGreaterThan(20);
    expect(results.every((r) => r.checkpoints > 0)).toBe(true);
    expect(results.filter((r) => r.outputCommit === OutputCommit.PER_BATCH)).toHaveLength(SCHEDULES / 2);
    expect(sum((r) => r.restores)).toBe(SCHEDULES / 5);
  });
});
