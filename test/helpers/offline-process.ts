// `sluice offline` as a child process, for the tests that kill it, and the committed content of a topic.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { CommittedRangeReader, KafkaAdmin } from '../../lib/kafka/index.js';

export interface OfflineProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Waits for the process to exit, at most `ms`: then it is killed and its output shown. */
export async function exitCode(offline: OfflineProcess, ms: number): Promise<number | null> {
  const timedOut = Symbol('timed out');
  const code = await Promise.race([offline.exited, new Promise((resolve) => setTimeout(() => resolve(timedOut), ms))]);
  if (code !== timedOut) return code as number | null;
  offline.child.kill('SIGKILL');
  throw new Error(`sluice offline did not stop within ${ms} ms; it printed:\n${offline.output().slice(-4_000)}`);
}

/** `sluice offline <pipelineFile> <args>` on `brokers`, with 2-second checkpoints and batches of 500. */
export function startOffline(
  brokers: readonly string[],
  pipelineFile: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): OfflineProcess {
  const child = spawn(
    process.execPath,
    ['bin/sluice.js', 'offline', pipelineFile, '--checkpoint-interval', '2000', '--batch-size', '500', ...args],
    { env: { ...process.env, KAFKA_BROKERS: brokers.join(','), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Every committed value of `topic`, parsed as JSON, partition by partition. */
export async function readTopicValues<T>(brokers: readonly string[], topic: string): Promise<T[]> {
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const reader = new CommittedRangeReader({ brokers: [...brokers] });
  try {
    const [description] = await admin.describeTopics([topic]);
    const values: T[] = [];
    for (const p of description?.partitions ?? []) {
      for (const record of await reader.read({ topic, partition: p.partition, from: 0, to: Number(p.stable) })) {
        values.push(JSON.parse(record.value?.toString('utf8') ?? 'null') as T);
      }
    }
    return values;
  } finally {
    await reader.close();
    await admin.close();
  }
}
