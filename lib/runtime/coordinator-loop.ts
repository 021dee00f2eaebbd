/**
 * How often the coordinator runs: a quarter of the checkpoint interval, between 100 ms and
 * 1 s — so a checkpoint is triggered close to its time and completes soon after the last
 * shard acknowledges it.
 */
export function coordinatorPeriodMs(checkpointIntervalMs: number): number {
  return Math.min(1_000, Math.max(100, checkpointIntervalMs / 4));
}

export interface CoordinatorLoopOptions {
  readonly periodMs: number;
  /** How long to keep running the coordinator: the invocation's share of its schedule. */
  readonly runForMs: number;
  /** The time the invocation has left (Lambda's context), when known: the loop stops a period before it runs out. */
  readonly remainingMs?: () => number;
  readonly clock?: () => number;
}

/** A coordinator run after which the invocation ends early: the pipeline has gone to rest, and its schedule is off. */
export function resting(result: { readonly outcome: string }): boolean {
  return result.outcome === 'asleep';
}

/**
 * Runs the coordinator every `periodMs` for `runForMs`: a scheduled Lambda function can be
 * started at most once a minute, and a checkpoint needs a run to trigger it and another to
 * complete it, so one run per invocation would stretch every checkpoint to minutes.
 */
export async function repeatCoordinator<R extends { readonly outcome: string }>(
  run: () => Promise<R>,
  options: CoordinatorLoopOptions,
  onRun: (result: R) => void,
): Promise<{ runs: number; last: R }> {
  const clock = options.clock ?? Date.now;
  const started = clock();
  let runs = 0;
  for (;;) {
    const due = clock() + options.periodMs;
    const last = await run();
    runs++;
    onRun(last);
    if (resting(last)) return { runs, last };
    const remaining = options.remainingMs?.() ?? Number.POSITIVE_INFINITY;
    if (due - started + options.periodMs > options.runForMs || remaining < 2 * options.periodMs + (due - clock())) return { runs, last };
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - clock())));
  }
}
