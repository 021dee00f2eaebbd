// The seed example as a user runs it: orders without a key, from a producer of their own, and
// `sluice offline` killed with SIGKILL three times while they arrive. The keyBy repartitions,
// so every order counts wherever the producer put it, and the read_committed output equals
// the 5-minute totals of every order in the topic: nothing lost, nothing twice. A second,
// new state beside those topics is refused.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WINDOW_SIZE, type Order, type OrderAggregate } from '../../../examples/order-aggregation.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exitCode, readTopicValues, startOffline as startOfflineProcess } from '../../helpers/offline-process.js';
import { expectedTotals, seededRandom } from '../../helpers/orders.js';

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-seed-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const PRODUCER = 'test/fixtures/scripts/produce-unkeyed-orders.ts';
const OFFLINE_PARTITIONS = 4;

describe('the seed example, fed unkeyed orders by a separate producer', () => {
  it('gives exactly-once 5-minute totals through three SIGKILLs', async () => {
    const namespace = `${uniqueName('seed')}-`;
    const env = { ORDER_AGGREGATION_NAMESPACE: namespace };
    const startOffline = (...args: string[]) => startOfflineProcess('examples/order-aggregation.ts', ['--no-generate', '--state-dir', stateDir, ...args], env);
    const random = seededRandom(16);

    // The first run creates the topics, so that the producer finds `orders` with its 4 partitions.
    let offline = startOffline('--for', '120');
    await expect.poll(offline.output, { timeout: 60_000, interval: 100 }).toContain('Running');
    const producer = spawn(process.execPath, ['--import', 'tsx', PRODUCER, testBrokers().join(','), `${namespace}orders`, '24000', '1000'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const produced = new Promise<number | null>((resolve) => producer.once('exit', resolve));
    let kills = 0;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 3_000 + random() * 6_000));
      offline.child.kill('SIGKILL');
      await exitCode(offline, 10_000);
      if (++kills === 3) break;
      offline = startOffline('--for', '120');
      await expect.poll(offline.output, { timeout: 60_000, interval: 100 }).toContain('Running');
    }
    expect(await produced).toBe(0);

    const orders = await readTopicValues<Order>(`${namespace}orders`);
    expect(orders).toHaveLength(24_000);
    // One order worth nothing, an hour later, on every partition: every window closes.
    const closingAt = Math.max(...orders.map((order) => order.timestamp)) + 3_600_000;
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      Array.from({ length: OFFLINE_PARTITIONS }, (_, partition) => ({
        topic: `${namespace}orders`,
        partition,
        value: JSON.stringify({ orderId: `closing-${partition}`, category: 'closing', amount: 0, timestamp: closingAt }),
      })),
    );
    await writer.flush();
    await writer.close();

    const expected = expectedTotals(orders.map((order) => ({ ...order, late: false })), WINDOW_SIZE);
    const last = startOffline('--for', '180');
    const consumed = await consumeAll(`${namespace}order-aggregates`, { expected: expected.size, timeoutMs: 150_000, settleMs: 3_000 });
    last.child.kill('SIGTERM');
    expect(await exitCode(last, 30_000), last.output()).toBe(0);

    const aggregates = consumed.map((message) => JSON.parse(message.value ?? '') as OrderAggregate);
    const keys = aggregates.map((a) => `${a.category}@${a.windowStart}`);
    expect(new Set(keys).size, 'no total written twice').toBe(keys.length);
    expect(new Map(aggregates.map((a) => [`${a.category}@${a.windowStart}`, a.amount]))).toEqual(expected);
    expect(kills).toBe(3);

    // A second state, new, beside the topics of this one: its second stage would read this
    // run's repartition records as its own, so offline mode refuses to start.
    const strangerState = mkdtempSync(join(tmpdir(), 'sluice-seed-stranger-'));
    try {
      const stranger = startOfflineProcess('examples/order-aggregation.ts', ['--no-generate', '--state-dir', strangerState, '--for', '60'], env);
      expect(await exitCode(stranger, 60_000)).not.toBe(0);
      expect(stranger.output()).toContain(
        `The state in ${strangerState} is new, but the repartition topic ${namespace}order-aggregation-keyBy-repartition holds committed records`,
      );
    } finally {
      rmSync(strangerState, { recursive: true, force: true });
    }
  }, 540_000);
});
