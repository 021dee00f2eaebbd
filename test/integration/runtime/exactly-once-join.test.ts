// A window join on the serverless runtime against the real broker, DynamoDB (dynalite) and S3
// (s3rver), through the same fault schedules as exactly-once.test.ts: each minute's category
// totals joined with themselves, both inputs through one repartition topic to a second stage.
// The read_committed output must equal what a plain loop computes, every pair exactly once.
import { describe, expect, it } from 'vitest';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule } from '../../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();
const seeds = Array.from({ length: 12 }, (_, i) => 300 + i);

describe.concurrent('a window join on the serverless runtime, exactly once', () => {
  it.each(seeds)('seed %i: exact read_committed output through injected faults', async (seed) => {
    const result = await runSchedule(environment(), 'join', seed, { orders: 400 });
    expect(result.stages).toBe(2);
    expect(result.problems, `seed ${seed}`).toEqual([]);
    expect(result.checkpoints).toBeGreaterThan(0);
  }, 300_000);
});
