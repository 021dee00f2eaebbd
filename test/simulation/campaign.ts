// Runs many simulated schedules, on worker threads, and shrinks each failure to a short replay.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { drawSchedule, type ScheduleConfig, type ScheduleOverrides } from './schedule.js';
import { simulate, type SimulationResult } from './world.js';

/** What a campaign adds up of each schedule. */
export type ScheduleCounts = Pick<SimulationResult, 'counts' | 'steps'>;

export interface CampaignOptions {
  readonly firstSeed: number;
  readonly schedules: number;
  /** Stops starting schedules after this time. */
  readonly deadline?: number;
  /** Worker threads; 0 runs the schedules in this thread. Default: one per core. */
  readonly workers?: number;
  readonly overrides?: ScheduleOverrides;
  /** Shrink each failure to a short replay (the default), or only report its seed. */
  readonly shrink?: boolean;
  readonly onFailure?: (failure: Failure) => void;
  readonly onProgress?: (ran: number, failed: number) => void;
  /** Each schedule's outcome, in the order they finish. */
  readonly onSchedule?: (seed: number, problems: readonly string[], result: ScheduleCounts) => void;
}

export interface Failure {
  readonly seed: number;
  readonly problems: readonly string[];
  /** The smallest variant of the schedule found that still fails, and the command that replays it. */
  readonly shrunk: ScheduleConfig;
  readonly replay: string;
}

export interface CampaignReport {
  readonly ran: number;
  readonly failures: readonly Failure[];
  readonly totals: Record<string, number>;
  readonly durationMs: number;
}

/** The replay command of a schedule: the seed, and what shrinking changed. */
export function replayCommand(config: ScheduleConfig): string {
  const drawn = drawSchedule(config.seed);
  const flags = [`--replay ${config.seed}`];
  if (config.orders !== drawn.orders) flags.push(`--orders ${config.orders}`);
  if (config.faultSteps !== drawn.faultSteps) flags.push(`--fault-steps ${config.faultSteps}`);
  if (config.kind !== drawn.kind) flags.push(`--kind ${config.kind}`);
  if (config.restore) flags.push('--restores');
  if (config.outputCommit !== drawn.outputCommit) flags.push(`--output-commit ${config.outputCommit}`);
  if (config.tickGrace !== drawn.tickGrace) flags.push(config.tickGrace ? '--tick-grace' : '--no-tick-grace');
  if (config.kafkaErrors !== drawn.kafkaErrors) flags.push(`--kafka-errors ${config.kafkaErrors}`);
  return `npm run simulate -- ${flags.join(' ')}`;
}

/**
 * The failing schedule made smaller while it still fails: fewer orders, then a shorter
 * fault phase, each halved as long as the same seed keeps failing.
 */
export async function shrink(config: ScheduleConfig): Promise<ScheduleConfig> {
  let smallest = config;
  const fails = async (candidate: ScheduleConfig) => (await simulate(candidate)).problems.length > 0;
  for (const field of ['orders', 'faultSteps'] as const) {
    for (let value = Math.floor(smallest[field] / 2); value >= (field === 'orders' ? 4 : 20); value = Math.floor(value / 2)) {
      const candidate = { ...smallest, [field]: value };
      if (!(await fails(candidate))) break;
      smallest = candidate;
    }
  }
  return smallest;
}

/** Adds a schedule's counts to a campaign's totals. */
export function addTotals(totals: Record<string, number>, result: ScheduleCounts): void {
  const { errors, ...counts } = result.counts;
  for (const [name, value] of Object.entries(counts)) totals[name] = (totals[name] ?? 0) + value;
  totals.steps = (totals.steps ?? 0) + result.steps;
  for (const [name, value] of Object.entries(errors)) totals[`error ${name}`] = (totals[`error ${name}`] ?? 0) + value;
}

/** A worker thread that loads the TypeScript sources through tsx, the same under vitest as under the CLI. */
const WORKER_SOURCE = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(
  new URL('./campaign-worker.ts', import.meta.url).href,
)}); });`;

interface WorkerMessage {
  readonly seed: number;
  readonly problems: string[];
  readonly result: ScheduleCounts;
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const started = Date.now();
  const totals: Record<string, number> = {};
  const failures: Failure[] = [];
  let ran = 0;
  const overrides = options.overrides ?? {};
  const record = async (seed: number, problems: readonly string[], result: ScheduleCounts) => {
    ran++;
    addTotals(totals, result);
    options.onSchedule?.(seed, problems, result);
    if (problems.length > 0) {
      const drawn = drawSchedule(seed, overrides);
      const shrunk = options.shrink === false ? drawn : await shrink(drawn);
      const failure = { seed, problems, shrunk, replay: replayCommand(shrunk) };
      failures.push(failure);
      options.onFailure?.(failure);
    }
    options.onProgress?.(ran, failures.length);
  };
  const seeds = Array.from({ length: options.schedules }, (_, i) => options.firstSeed + i);
  const workers = options.workers ?? availableParallelism();
  const pastDeadline = () => options.deadline !== undefined && Date.now() > options.deadline;

  if (workers === 0) {
    for (const seed of seeds) {
      if (pastDeadline()) break;
      const result = await simulate(drawSchedule(seed, overrides));
      await record(seed, result.problems, result);
    }
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(workers, seeds.length) }, async () => {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { overrides } });
        try {
          for (;;) {
            const seed = seeds[next++];
            if (seed === undefined || pastDeadline()) break;
            const message = await new Promise<WorkerMessage>((resolve, reject) => {
              worker.once('message', resolve);
              worker.once('error', reject);
              worker.postMessage(seed);
            });
            worker.removeAllListeners('error');
            await record(message.seed, message.problems, message.result);
          }
        } finally {
          await worker.terminate();
        }
      }),
    );
  }
  return { ran, failures, totals, durationMs: Date.now() - started };
}
