import { describe, expect, it, vi } from 'vitest';
import { completionPollMs, coordinatorPeriodMs, nextRunInMs, repeatCoordinator } from '../../../lib/runtime/coordinator-loop.js';
import { INITIAL_COORDINATOR_RECORD } from '../../../lib/state/coordinator-store.js';

const CHECKPOINTING = { intervalMs: 5_000, timeoutMs: 60_000, minPauseMs: 0, maxCommitDelayMs: 60_000 };

describe('the coordinator loop', () => {
  it('runs a quarter checkpoint interval apart, between 100 ms and 1 s', () => {
    expect(coordinatorPeriodMs(5_000)).toBe(1_000);
    expect(coordinatorPeriodMs(2_000)).toBe(500);
    expect(coordinatorPeriodMs(100)).toBe(100);
    expect(coordinatorPeriodMs(600_000)).toBe(1_000);
  });

  it('runs every period for its share of the schedule, and reports each run', async () => {
    // Fake timers: a loaded machine's late timers would otherwise decide how many periods fit.
    vi.useFakeTimers();
    try {
      const startedAt: number[] = [];
      const reported: number[] = [];
      const loop = repeatCoordinator(
        () => {
          startedAt.push(Date.now());
          return Promise.resolve({ outcome: 'idle', run: startedAt.length });
        },
        { periodMs: 20, runForMs: 200 },
        (result) => reported.push(result.run),
      );
      await vi.advanceTimersByTimeAsync(1_000);
      const { runs, last } = await loop;
      // Runs at 0, 20, …, 180 ms: one more would end past its 200 ms share.
      expect(runs).toBe(10);
      expect(last.run).toBe(runs);
      expect(reported).toEqual(Array.from({ length: runs }, (_, i) => i + 1));
      expect(startedAt.slice(1).map((at, i) => at - (startedAt[i] ?? 0))).toEqual(Array.from({ length: runs - 1 }, () => 20));
    } finally {
      vi.useRealTimers();
    }
  });

  it('runs again soon while a checkpoint is in flight, when the next one is due otherwise, and a period apart at most', () => {
    const record = { ...INITIAL_COORDINATOR_RECORD, triggered: 3, triggeredAt: 10_000, completed: 2, completedAt: 6_000 };
    expect(nextRunInMs(record, CHECKPOINTING, 10_050, 4)).toBe(25);
    expect(nextRunInMs(record, CHECKPOINTING, 10_050, 60), 'each look reads every shard record').toBe(60);
    expect(completionPollMs(5_000), 'never slower than').toBe(100);
    const completed = { ...record, completed: 3, completedAt: 10_400 };
    expect(nextRunInMs(completed, CHECKPOINTING, 14_700, 4), 'due at 15,000').toBe(300);
    expect(nextRunInMs(completed, CHECKPOINTING, 10_400, 4), 'the period').toBe(1_000);
    expect(nextRunInMs(completed, CHECKPOINTING, 15_200, 4), 'overdue').toBe(0);
    expect(nextRunInMs(completed, { ...CHECKPOINTING, minPauseMs: 4_900 }, 14_700, 4), 'after the minimum pause').toBe(600);
    expect(nextRunInMs({ ...completed, asleep: true }, CHECKPOINTING, 15_200, 4), 'at rest').toBe(1_000);
  });

  it('runs again when the run says, within the period', async () => {
    const startedAt: number[] = [];
    await repeatCoordinator(
      () => {
        startedAt.push(Date.now());
        return Promise.resolve({ outcome: 'waiting', nextRunInMs: startedAt.length < 5 ? 5 : 1_000 });
      },
      { periodMs: 100, runForMs: 260 },
      () => undefined,
    );
    const gaps = startedAt.slice(1).map((at, i) => at - (startedAt[i] ?? 0));
    expect(gaps.slice(0, 4).every((gap) => gap < 50), `${gaps.join(', ')} ms: the first runs asked for 5 ms`).toBe(true);
    expect(gaps.slice(4).every((gap) => gap >= 99), `${gaps.join(', ')} ms: then for more than the period`).toBe(true);
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
