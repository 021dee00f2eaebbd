// The runtime end to end against the real broker and DynamoDB (dynalite): processor,
// coordinator and commit function drive a one-stage and a two-stage pipeline through crashes
// at every step, redeliveries and cut batches; the read_committed output must equal what a
// plain loop computes (test/helpers/runtime-schedule.ts). `npm run chaos` runs more schedules.
import { describe, expect, it } from 'vitest';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule } from '../../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();

describe('the serverless runtime, exactly once', () => {
  it.each([
    ['one-stage', 11],
    ['one-stage', 12],
    ['one-stage', 13],
    ['two-stage', 21],
    ['two-stage', 22],
  ] as const)(
    '%s pipeline: exact read_committed output through crashes at every step, redelivered and cut batches, concurrent runs, DynamoDB and S3 faults (seed %i)',
    async (kind, seed) => {
      const result = await runSchedule(environment(), kind, seed);
      expect(result.stages).toBe(kind === 'one-stage' ? 1 : 2);
      expect(result.problems, `seed ${seed}`).toEqual([]);
      expect(Object.values(result.crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
      expect(result.redelivered + result.cut).toBeGreaterThan(0);
      expect(result.dynamoFaults.throttled + result.dynamoFaults.ambiguous).toBeGreaterThan(10);
      expect(result.s3Faults.throttled + result.s3Faults.ambiguous).toBeGreaterThan(0);
      expect(result.checkpoints).toBeGreaterThan(1);
    },
    240_000,
  );
});
