// Offline mode at rest: once its input has gone quiet and everything is committed, none of the
// pipeline's functions is invoked (no coordinator run, no tick, no commit, no batch), until new
// input comes; its first batch wakes the coordinator, whose checkpoint then commits its output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin } from '../../../lib/kafka/index.js';
import { OfflineSession } from '../../../lib/offline/offline.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-rest-'));
const admin = new KafkaAdmin({ brokers: testBrokers() });
const reader = new CommittedRangeReader({ brokers: testBrokers() });
afterAll(async () => {
  await reader.close();
  await admin.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** The records read_committed readers see in a topic now. */
async function committedCount(topic: string): Promise<number> {
  let count = 0;
  for (const { partition, low, stable } of (await admin.describeTopics([topic])).flatMap((d) => d.partitions)) {
    count += (await reader.read({ topic, partition, from: Number(low), to: Number(stable) })).length;
  }
  return count;
}

describe('offline mode at rest', () => {
  it('invokes no function while nothing is pending, and wakes at the first input', async () => {
    const name = uniqueName('rest');
    process.env.TEST_PIPELINE_NAME = name;
    const fixture = await import('../../fixtures/pipelines/offline-orders.js');
    const session = await OfflineSession.start({
      pipeline: fixture.default,
      out: () => undefined,
      checkpointIntervalMs: 1_000,
      batchWindowMs: 100,
      stateDir,
      env: { KAFKA_BROKERS: testBrokers().join(',') },
    });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    const produce = async (from: number, to: number) => {
      await writer.write(Array.from({ length: to - from }, (_, i) => fixture.generateInput(from + i)));
      await writer.flush();
    };
    const asleep = async () => (await session.runtime.coordinator.get()).asleep === true;
    try {
      await produce(0, 6_000);
      await expect.poll(asleep, { timeout: 90_000, interval: 250 }).toBe(true);
      const atRest = { ...session.invocations };
      const output = await committedCount(`${name}-out`);
      expect(output).toBeGreaterThan(0);
      // Five seconds at rest, five checkpoint intervals: nothing runs.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(session.invocations).toEqual(atRest);

      const { triggered } = await session.runtime.coordinator.get();
      await produce(6_000, 9_000);
      await expect.poll(async () => (await session.runtime.coordinator.get()).committed, { timeout: 60_000, interval: 250 }).toBeGreaterThan(triggered);
      expect(session.invocations.processor).toBeGreaterThan(atRest.processor);
      expect(session.invocations.coordinator).toBeGreaterThan(atRest.coordinator);
      await expect.poll(() => committedCount(`${name}-out`), { timeout: 60_000, interval: 500 }).toBeGreaterThan(output);
      await expect.poll(asleep, { timeout: 90_000, interval: 250 }).toBe(true);
    } finally {
      await writer.close();
      await session.stop();
    }
  }, 240_000);
});
