// The seed example as a user runs it: orders without a key, from a producer of their own, and
// `sluice offline` killed with SIGKILL three times while they arrive (test/helpers/
// offline-kill-schedule.ts; `npm run chaos -- --offline-kills N` runs more such schedules). The
// keyBy repartitions, so every order counts wherever the producer put it, and the read_committed
// output equals the 5-minute totals of every order in the topic: nothing lost, nothing twice. A
// second, new state beside those topics is refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { runOfflineKillSchedule } from '../../helpers/offline-kill-schedule.js';
import { exitCode, startOffline } from '../../helpers/offline-process.js';

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-seed-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('the seed example, fed unkeyed orders by a separate producer', () => {
  it('gives exactly-once 5-minute totals through three SIGKILLs', async () => {
    const namespace = `${uniqueName('seed')}-`;
    const result = await runOfflineKillSchedule({ brokers: testBrokers(), seed: 16, namespace, stateDir, orders: 24_000, kills: 3, backlog: false });
    expect(result.problems).toEqual([]);
    expect(result.orders).toBe(24_000);
    expect(result.kills).toBe(3);

    // A second state, new, beside the topics of this one: its second stage would read this
    // run's repartition records as its own, so offline mode refuses to start.
    const strangerState = mkdtempSync(join(tmpdir(), 'sluice-seed-stranger-'));
    try {
      const stranger = startOffline(testBrokers(), 'examples/order-aggregation.ts', ['--no-generate', '--state-dir', strangerState, '--for', '60'], {
        ORDER_AGGREGATION_NAMESPACE: namespace,
      });
      expect(await exitCode(stranger, 60_000)).not.toBe(0);
      expect(stranger.output()).toContain(
        `The state in ${strangerState} is new, but the repartition topic ${namespace}order-aggregation-keyBy-repartition holds committed records`,
      );
    } finally {
      rmSync(strangerState, { recursive: true, force: true });
    }
  }, 540_000);
});
