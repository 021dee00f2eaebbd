import { describe, expect, it } from 'vitest';
import { coordinatorPeriodMs, repeatCoordinator } from '../../../lib/runtime/coordinator-loop.js';

describe('the coordinator loop', () => {
  it('runs a quarter checkpoint interval apart, between 100 ms and 1 s', () => {
    expect(coordinatorPeriodMs(5_000)).toBe(1_000);
    expect(coordinatorPeriodMs(2_000)).toBe(500);
    expect(coordinatorPeriodMs(100)).toBe(100);
    expect(coordinatorPeriodMs(600_000)).toBe(1_000);
  });

  it('runs every period for its share of the schedule, and reports each run', async () => {
    const startedAt: number[] = [];
    const reported: number[] = [];
    const { runs, last } = await repeatCoordinator(
      () => {
        startedAt.push(Date.now());
        return Promise.resolve({ outcome: 'idle', run: startedAt.length });
      },
      { periodMs: 20, runForMs: 200 },
      (result) => reported.push(result.run),
    );
    expect(runs).toBeGreaterThanOrEqual(8);
    expect(runs).toBeLessThanOrEqual(10);
    expect(last.run).toBe(runs);
    expect(reported).toEqual(Array.from({ length: runs }, (_, i) => i + 1));
    const gaps = startedAt.slice(1).map((at, i) => at - (startedAt[i] ?? 0));
    expect(Math.min(...gaps), 'never sooner than the period').toBeGreaterThanOrEqual(19);
    expect((startedAt.at(-1) ?? 0) - (startedAt[0] ?? 0), 'within its share').toBeLessThan(200);
  });

  it('stops while the invocation still has time to finish a run', async () => {
    let remaining = 1_000;
    let runs = 0;
    const result = await repeatCoordinator(
      () => {
        runs++;
        remaining -= 300;
        return Promise.resolve({ outcome: 'waiting' });
      },
      { periodMs: 100, runForMs: 55_000, remainingMs: () => remaining },
      () => undefined,
    );
    // After the third run 100 ms remain: a wait, a run and a margin of one period each would not fit.
    expect(result.runs).toBe(3);
    expect(runs).toBe(3);
  });

  it('ends the invocation once the pipeline has gone to rest: its schedule is off until input wakes it', async () => {
    const outcomes = ['completed', 'idle', 'asleep', 'idle'];
    const result = await repeatCoordinator(() => Promise.resolve({ outcome: outcomes.shift() ?? 'idle' }), { periodMs: 5, runForMs: 55_000 }, () => undefined);
    expect(result).toEqual({ runs: 3, last: { outcome: 'asleep' } });
  });

  it('lets a failing run fail the invocation, so that Lambda reports it', async () => {
    await expect(repeatCoordinator(() => Promise.reject(new Error('DynamoDB throttled')), { periodMs: 10, runForMs: 100 }, () => undefined)).rejects.toThrow(
      'DynamoDB throttled',
    );
  });
});
