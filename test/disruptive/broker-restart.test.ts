// Fault schedules of the runtime (test/helpers/runtime-schedule.ts) during which the Kafka
// broker restarts twice: the read_committed output must still be exact. This restarts the
// broker every test shares, so it runs in a project of its own, after all the others.
import { describe, expect, it } from 'vitest';
import { startLocalBroker, stopLocalBroker } from '../../lib/offline/kafka-broker.js';
import { useRuntimeEnvironment } from '../helpers/runtime-environment.js';
import { runSchedule } from '../helpers/runtime-schedule.js';

const environment = useRuntimeEnvironment();

describe('the serverless runtime, exactly once across broker restarts', () => {
  // Restarting the broker needs the local one; against KAFKA_BROKERS it is skipped.
  it.skipIf(process.env.KAFKA_BROKERS !== undefined).each([
    ['one-stage', 31],
    ['two-stage', 32],
  ] as const)('%s pipeline, seed %i: exact output through crashes, faults and two broker restarts', async (kind, seed) => {
    const restartBroker = async () => {
      await stopLocalBroker();
      await startLocalBroker();
    };
    const result = await runSchedule(environment(), kind, seed, { orders: 1_500, restartBroker });
    expect(result.problems, `seed ${seed}`).toEqual([]);
    expect(result.brokerRestarts).toBe(2);
  }, 300_000);
});
