// Two-input pipelines on the serverless runtime against the real broker, DynamoDB (dynalite) and
// S3 (s3rver), through the same fault schedules as exactly-once.test.ts: a window join of each
// minute's category totals with themselves, and a broadcast of one category's totals to every
// shard of a keyed stage or of a non-keyed one; both inputs through one repartition topic to a
// second stage. The read_committed output must equal what a plain loop computes, every result
// exactly once (once per shard for what a broadcast element makes every shard write).
import { describe, expect, it } from 'vitest';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule, type ScheduleKind } from '../../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();
const KINDS: readonly ScheduleKind[] = ['join', 'broadcast', 'broadcast-forward'];
const schedules = Array.from({ length: 18 }, (_, i) => [KINDS[i % KINDS.length], 300 + i] as [ScheduleKind, number]);

describe.concurrent('two inputs on the serverless runtime, exactly once', () => {
  it.each(schedules)('%s, seed %i: exact read_committed output through injected faults', async (kind, seed) => {
    const result = await runSchedule(environment(), kind, seed, { orders: 400 });
    expect(result.stages).toBe(2);
    expect(result.problems, `seed ${seed}`).toEqual([]);
    expect(result.checkpoints).toBeGreaterThan(0);
  }, 300_000);
});
