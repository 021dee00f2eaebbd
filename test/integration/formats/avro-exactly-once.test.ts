// Avro orders in, Avro totals out, against the real registry and broker, through the fault
// schedules of the runtime end-to-end test (crashes at every step, zombies, redeliveries, cut
// batches, DynamoDB and S3 faults). The orders' schema evolves mid-stream: the second half
// carries a field the first lacks, with a default. The read_committed output, decoded from Avro,
// must equal what a plain loop computes.
import { describe, expect, inject, it } from 'vitest';
import { PROCESSOR_STEPS } from '../../../lib/runtime/processor.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule, type ScheduleKind, type ScheduleResult } from '../../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();
const registry = inject('schemaRegistryUrl');
const seeds = Array.from({ length: 8 }, (_, i) => [i % 2 === 0 ? 'one-stage' : 'two-stage', 900 + i] as [ScheduleKind, number]);
const results: ScheduleResult[] = [];

describe.concurrent('Avro through the registry, exactly once', () => {
  it.each(seeds)('%s pipeline, seed %i: exact read_committed Avro output through injected faults', async (kind, seed) => {
    const result = await runSchedule(environment(), kind, seed, { orders: 600, avroRegistry: registry });
    results.push(result);
    expect(result.problems, `seed ${seed}`).toEqual([]);
  }, 300_000);

});

describe('the Avro fault schedules', () => {
  it('crashed at every step, redelivered and overlapped invocations', () => {
    expect(results).toHaveLength(seeds.length);
    const sum = (pick: (r: ScheduleResult) => number) => results.reduce((total, r) => total + pick(r), 0);
    // Per batch alone commits its own transaction after the shard's commit.
    for (const step of PROCESSOR_STEPS.filter((step) => step !== 'output-committed')) {
      expect(sum((r) => r.crashes[step] ?? 0), `crashes after ${step}`).toBeGreaterThan(0);
    }
    expect(sum((r) => r.redelivered)).toBeGreaterThan(0);
    expect(sum((r) => r.concurrent)).toBeGreaterThan(0);
    expect(results.every((r) => r.checkpoints > 0)).toBe(true);
  });
});
