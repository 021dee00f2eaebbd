// The README's demo: `sluice offline` on the seed example, generating 2,000 orders a second
// with 5-second checkpoints and --print-output, prints committed 5-minute category sums soon
// after starting (within four checkpoint intervals: a liveness bound that a loaded machine still
// meets; how soon is measured by npm run bench), and each printed sum is right: it equals the sum of the
// orders in `orders` for that category and window. The run has topics of its own
// (ORDER_AGGREGATION_NAMESPACE), as a first run on a fresh broker has.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { readTopicValues } from '../../helpers/offline-process.js';
import type { Order, OrderAggregate } from '../../../examples/order-aggregation.js';

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-demo-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('npm run offline -- --generate 2000 --print-output', () => {
  it('prints right 5-minute category sums within a few checkpoint intervals', async () => {
    const namespace = `${uniqueName('demo')}-`;

    const child = spawn(
      process.execPath,
      ['bin/sluice.js', 'offline', 'examples/order-aggregation.ts', '--generate', '2000', '--print-output', '--checkpoint-interval', '5000', '--batch-size', '500', '--state-dir', stateDir, '--for', '30'],
      { env: { ...process.env, KAFKA_BROKERS: testBrokers().join(','), ORDER_AGGREGATION_NAMESPACE: namespace }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let running: number | undefined;
    const printed: { at: number; aggregate: OrderAggregate }[] = [];
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.startsWith('Running')) running = Date.now();
        const prefix = `${namespace}order-aggregates: `;
        if (line.startsWith(prefix)) printed.push({ at: Date.now(), aggregate: JSON.parse(line.slice(prefix.length)) as OrderAggregate });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);

    expect(running).toBeDefined();
    expect(printed.length, output).toBeGreaterThan(8);
    expect((printed[0]?.at ?? Infinity) - (running ?? 0)).toBeLessThan(20_000);

    const sums = new Map<string, number>();
    for (const order of await readTopicValues<Order>(testBrokers(), `${namespace}orders`)) {
      const windowStart = Math.floor(order.timestamp / 300_000) * 300_000;
      sums.set(`${order.category}@${windowStart}`, (sums.get(`${order.category}@${windowStart}`) ?? 0) + order.amount);
    }
    for (const { aggregate } of printed) {
      expect(aggregate.windowEnd - aggregate.windowStart).toBe(300_000);
      expect(aggregate.amount, `${aggregate.category}@${aggregate.windowStart}`).toBe(sums.get(`${aggregate.category}@${aggregate.windowStart}`));
    }
    const keys = printed.map(({ aggregate }) => `${aggregate.category}@${aggregate.windowStart}`);
    expect(new Set(keys).size).toBe(keys.length);
  }, 120_000);
});
