// Offline mode survives being killed: `sluice offline` generating orders is SIGKILLed at
// random moments several times and started again on the same state folder; then, with the
// windows closed, the read_committed output equals the totals of every order in the input
// topic — nothing lost, nothing twice.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { seconds } from '../../../lib/api/index.js';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin } from '../../../lib/kafka/index.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrdersOnEveryPartition, expectedTotals, seededRandom, type GeneratedOrder } from '../../helpers/orders.js';
import type { Total } from '../../helpers/pipelines.js';

const PIPELINE_FILE = 'test/fixtures/pipelines/offline-orders.ts';
const stateDir = mkdtempSync(join(tmpdir(), 'sluice-offline-'));

afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

interface OfflineProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Waits for the process to exit, at most `ms`: then it is killed and its output shown. */
async function exitCode(offline: OfflineProcess, ms: number): Promise<number | null> {
  const timedOut = Symbol('timed out');
  const code = await Promise.race([offline.exited, new Promise((resolve) => setTimeout(() => resolve(timedOut), ms))]);
  if (code !== timedOut) return code as number | null;
  offline.child.kill('SIGKILL');
  throw new Error(`sluice offline did not stop within ${ms} ms; it printed:\n${offline.output().slice(-4_000)}`);
}

function startOffline(name: string, ...args: string[]): OfflineProcess {
  const child = spawn(
    process.execPath,
    ['bin/sluice.js', 'offline', PIPELINE_FILE, '--checkpoint-interval', '2000', '--batch-size', '500', '--state-dir', stateDir, ...args],
    { env: { ...process.env, KAFKA_BROKERS: testBrokers().join(','), TEST_PIPELINE_NAME: name }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function readOrders(topic: string): Promise<GeneratedOrder[]> {
  const admin = new KafkaAdmin({ brokers: testBrokers() });
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  const [description] = await admin.describeTopics([topic]);
  const orders: GeneratedOrder[] = [];
  for (const p of description?.partitions ?? []) {
    for (const record of await reader.read({ topic, partition: p.partition, from: 0, to: Number(p.high) })) {
      orders.push({ ...(JSON.parse(record.value?.toString('utf8') ?? '{}') as GeneratedOrder), late: false });
    }
  }
  await reader.close();
  await admin.close();
  return orders;
}

describe('sluice offline', () => {
  it('gives exactly-once output through SIGKILLs at random moments and restarts', async () => {
    const name = uniqueName('offline');
    const random = seededRandom(2026);
    let kills = 0;
    for (let run = 0; run < 3; run++) {
      const offline = startOffline(name, '--generate', '1500', '--for', '120');
      await expect.poll(offline.output, { timeout: 60_000, interval: 100 }).toContain('Running');
      await new Promise((resolve) => setTimeout(resolve, 3_000 + random() * 6_000));
      offline.child.kill('SIGKILL');
      await exitCode(offline, 10_000);
      kills++;
    }

    const inputTopic = `${name}-orders`;
    const generated = await readOrders(inputTopic);
    expect(generated.length).toBeGreaterThan(5_000);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      closingOrdersOnEveryPartition(generated, 4).map(({ late: _late, ...o }) => ({ topic: inputTopic, key: o.category, value: JSON.stringify(o) })),
    );
    await writer.flush();
    await writer.close();

    const expected = expectedTotals(generated, seconds(20));
    const last = startOffline(name, '--no-generate', '--for', '180');
    const consumed = await consumeAll(`${name}-out`, { expected: expected.size, timeoutMs: 120_000, settleMs: 3_000 });
    last.child.kill('SIGTERM');
    expect(await exitCode(last, 30_000), last.output()).toBe(0);
    expect(last.output()).toContain('Stopped.');

    const keys = consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => `${t.category}@${t.windowStart}`);
    expect(new Set(keys).size, 'no total written twice').toBe(keys.length);
    const totals = new Map(consumed.map((m) => JSON.parse(m.value ?? '') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
    expect(totals).toEqual(expected);
    expect(kills).toBe(3);
  }, 420_000);
});
