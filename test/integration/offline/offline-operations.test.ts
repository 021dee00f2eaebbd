// `sluice status`, `savepoint` and `restore` with --offline: on a pipeline that never ran they
// say so; while `sluice offline` runs they reach its emulators (restore refuses, as it needs a
// stopped pipeline); once it stopped they open its state folder themselves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sluice } from '../../helpers/cli.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exitCode, startOffline } from '../../helpers/offline-process.js';

const PIPELINE_FILE = 'test/fixtures/pipelines/offline-orders.ts';
const stateDir = mkdtempSync(join(tmpdir(), 'sluice-operations-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

interface Status {
  checkpoints: { committed: number };
  shards: { offset: number | null }[];
}

describe('sluice status, savepoint and restore --offline', () => {
  it('say a pipeline never ran, reach a running one, and restore a stopped one', async () => {
    const name = uniqueName('operations');
    process.env.TEST_PIPELINE_NAME = name;
    process.env.KAFKA_BROKERS = testBrokers().join(',');
    const offline = ['--offline', '--state-dir', stateDir];
    const never = await sluice('status', PIPELINE_FILE, ...offline);
    expect(never.code).toBe(1);
    expect(never.stderr).toContain(`Pipeline ${name} has never run offline: there is no state in ${stateDir}.`);

    const running = startOffline(testBrokers(), PIPELINE_FILE, ['--state-dir', stateDir, '--generate', '300', '--for', '120'], { TEST_PIPELINE_NAME: name });
    const committed = async () => {
      const status = await sluice('status', PIPELINE_FILE, ...offline, '--json');
      return status.code === 0 ? (JSON.parse(status.stdout) as Status).checkpoints.committed : -1;
    };
    // Beside the exactly-once schedules on two cores, each `sluice status` start and the first
    // checkpoint can take their time: a clean-clone CI run once waited over a minute.
    await expect.poll(committed, { timeout: 150_000, interval: 1_000 }).toBeGreaterThanOrEqual(1);
    const saved = await sluice('savepoint', PIPELINE_FILE, ...offline, '--name', 'while-running');
    expect(saved.stdout).toMatch(/^Savepoint while-running written from checkpoint \d+ \(savepoints\/while-running\/manifest\.json\)\n$/);
    const refused = await sluice('restore', PIPELINE_FILE, ...offline, '--savepoint', 'while-running');
    expect(refused.stderr).toContain('sluice offline runs on this state now: stop it first (Ctrl-C), then restore, then start it again');

    running.child.kill('SIGTERM');
    expect(await exitCode(running, 30_000), running.output()).toBe(0);
    const stopped = await sluice('status', PIPELINE_FILE, ...offline, '--json');
    expect(stopped.code, stopped.stderr).toBe(0);
    expect((JSON.parse(stopped.stdout) as Status).shards.every((shard) => shard.offset !== null)).toBe(true);
    const restored = await sluice('restore', PIPELINE_FILE, ...offline, '--savepoint', 'while-running');
    expect(restored.stderr).toBe('');
    expect(restored.stdout).toMatch(/^Restored savepoint while-running into 4 shards: \d+ keys/);
  }, 240_000);
});
