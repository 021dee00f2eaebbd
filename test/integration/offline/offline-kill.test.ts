// Offline mode survives being killed: `sluice offline` generating orders is SIGKILLed at
// random moments several times and started again on the same state folder; then, with the
// windows closed, the read_committed output equals the totals of every order in the input
// topic — nothing lost, nothing twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seconds } from '../../../lib/api/index.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exitCode, readTopicValues, startOffline as startOfflineProcess } from '../../helpers/offline-process.js';
import { closingOrdersOnEveryPartition, expectedTotals, seededRandom, type GeneratedOrder } from '../../helpers/orders.js';
import type { Total } from '../../helpers/pipelines.js';

const PIPELINE_FILE = 'test/fixtures/pipelines/offline-orders.ts';
const stateDir = mkdtempSync(join(tmpdir(), 'sluice-offline-'));

afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const startOffline = (name: string, ...args: string[]) =>
  startOfflineProcess(testBrokers(), PIPELINE_FILE, ['--state-dir', stateDir, ...args], { TEST_PIPELINE_NAME: name });

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
    const generated = (await readTopicValues<GeneratedOrder>(testBrokers(), inputTopic)).map((order) => ({ ...order, late: false }));
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
