// The local broker's log rolls over at its size and keeps two older files, so that a test suite
// creating thousands of topics, or a broker left running for weeks, cannot fill the disk.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KafkaAdmin } from '../../../lib/kafka/index.js';
import { freePort } from '../../../lib/offline/emulators.js';
import { startLocalBroker, stopLocalBroker, type LocalBrokerOptions } from '../../../lib/offline/kafka-broker.js';

const LOG_FILE_BYTES = 50_000;
/** One log line past the size: the appender rolls over before the write that would pass it. */
const LONGEST_LINE_BYTES = 4_000;

describe('the local broker log', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'sluice-broker-log-'));
  let options: LocalBrokerOptions | undefined;
  afterAll(async () => {
    if (options) await stopLocalBroker(options);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('rolls server.log over at logFileBytes and keeps two older files', async () => {
    options = { port: await freePort(), stateDir, logFileBytes: LOG_FILE_BYTES, fresh: true };
    const { brokers } = await startLocalBroker(options);
    const admin = new KafkaAdmin({ brokers });
    try {
      // Each new partition logs a few lines; 80 of them write well past three files' worth.
      for (let i = 0; i < 10; i++) await admin.ensureTopics([{ topic: `rolled-${i}`, partitions: 8 }]);
    } finally {
      await admin.close();
    }
    const size = (name: string) => statSync(join(stateDir, name)).size;
    for (const name of ['server.log', 'server.log.1', 'server.log.2']) expect(size(name), name).toBeLessThan(LOG_FILE_BYTES + LONGEST_LINE_BYTES);
    expect(size('server.log.2')).toBeGreaterThan(LOG_FILE_BYTES / 2);
    expect(existsSync(join(stateDir, 'server.log.3'))).toBe(false);
  }, 120_000);
});
