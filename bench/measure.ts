// Running one contender in a process of its own under /usr/bin/time (wall, CPU, peak memory),
// and checking what it wrote, read back with read_committed, against the expected sums.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommittedRangeReader, KafkaAdmin } from '../lib/kafka/index.js';
import { parseResult } from './child-io.js';
import type { ContenderConfig, ContenderResult } from './contenders/config.js';
import type { Contender } from './contenders/registry.js';

if (!existsSync('/usr/bin/time')) throw new Error('The benchmark measures contenders with /usr/bin/time: apt-get install time');

export interface ProcessFigures {
  readonly output: string;
  readonly wallS: number;
  readonly cpuS: number;
  readonly peakMb: number;
}

export interface RunningContender {
  /** Resolves when the contender prints READY: it reads its input from then on. */
  readonly ready: Promise<void>;
  readonly exited: Promise<ProcessFigures>;
  /** Stops the contender and whatever it started. */
  stop(): void;
}

export function startContender(contender: Contender, config: ContenderConfig): RunningContender {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-bench-')), 'time');
  const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', file, ...contender.command(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  let signalReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (/^READY$/m.test(output)) signalReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<ProcessFigures>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      signalReady();
      const [wall = 0, user = 0, system = 0, rssKb = 0] =
        (existsSync(file) ? readFileSync(file, 'utf8') : '').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
      resolve({ output, wallS: wall, cpuS: user + system, peakMb: rssKb / 1024 });
    });
  });
  return {
    ready,
    exited,
    stop: () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    },
  };
}

/** The RESULT line a contender prints when done (Flink prints its elapsed time only). */
export function resultOf(printed: string, expectedWindows: number): ContenderResult | undefined {
  const result = parseResult(printed) as ContenderResult | undefined;
  if (result) return result;
  const flinkElapsed = /\{"elapsedMs":(\d+)\}/.exec(printed)?.[1];
  return flinkElapsed ? { elapsedMs: Number(flinkElapsed), outputs: expectedWindows } : undefined;
}

/** The contender's last words, for a report line. */
export function failure(printed: string): string {
  const last = printed.trim().split('\n').filter((line) => !/warning|node >=|a\.co\/|trace-warnings|AWS services|published after/i.test(line)).at(-1);
  return `failed (${last?.slice(0, 160) ?? 'no output'})`;
}

/** Compares the output topic, read with read_committed, with the expected sums (or, for a copy, the record count). */
export async function checkOutput(
  brokers: string[],
  contender: Contender,
  topic: string,
  expected: ReadonlyMap<string, number>,
  inputRecords: number,
): Promise<string> {
  const admin = new KafkaAdmin({ brokers });
  const reader = new CommittedRangeReader({ brokers });
  try {
    const [description] = await admin.describeTopics([topic]);
    const written = new Map<string, number>();
    let count = 0;
    let duplicates = 0;
    for (const { partition, stable } of description?.partitions ?? []) {
      for (const record of await reader.read({ topic, partition, from: 0, to: Number(stable) })) {
        count++;
        if (!contender.sums) continue;
        const sum = JSON.parse(record.value?.toString('utf8') ?? '{}') as { category: string; windowStart: number; amount: number };
        if (sum.category.startsWith('closing-')) continue;
        const key = `${sum.category}@${sum.windowStart}`;
        const earlier = written.get(key);
        if (earlier !== undefined && earlier !== sum.amount) return `${key} written twice, as ${earlier} and ${sum.amount}`;
        if (earlier !== undefined) duplicates++;
        written.set(key, sum.amount);
      }
    }
    if (!contender.sums) return count === inputRecords ? `all ${count.toLocaleString('en')} records` : `${count} of ${inputRecords} records`;
    const wrong = [...expected].filter(([key, amount]) => written.get(key) !== amount).length;
    if (wrong > 0 || written.size !== expected.size) return `${wrong} of ${expected.size} sums wrong or missing`;
    if (duplicates === 0) return `exact (${expected.size} sums)`;
    // A batch retried after its invocation was fenced writes its output again: allowed below EXACTLY_ONCE.
    const verdict = `all ${expected.size} sums right, ${duplicates} written twice`;
    return contender.guarantee === 'EXACTLY_ONCE' ? `${verdict}: NOT exactly once` : `${verdict} (allowed by ${contender.guarantee})`;
  } finally {
    await reader.close();
    await admin.close();
  }
}

export interface Measured extends ProcessFigures {
  readonly result: ContenderResult | undefined;
  readonly check: string;
}

/** Runs the contender over a pre-loaded input to its end, then checks its output. */
export async function measureThroughput(
  contender: Contender,
  config: ContenderConfig,
  expected: ReadonlyMap<string, number>,
): Promise<Measured> {
  const figures = await startContender(contender, config).exited;
  const result = resultOf(figures.output, config.expectedWindows);
  const check = result ? await checkOutput(config.brokers, contender, config.output, expected, config.records) : failure(figures.output);
  return { ...figures, result, check };
}
