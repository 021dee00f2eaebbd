// One offline instance per pipeline: a second one is refused whether it shares the first's
// state folder or brings its own (which would consume the same input beside it), and an
// instance killed with SIGKILL does not keep its successor out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exitCode, startOffline } from '../../helpers/offline-process.js';

const PIPELINE_FILE = 'test/fixtures/pipelines/offline-orders.ts';
const folders = [1, 2].map(() => mkdtempSync(join(tmpdir(), 'sluice-instance-')));

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('sluice offline, started twice', () => {
  it('refuses a second instance on the same state or the same broker, and not the successor of a killed one', async () => {
    const name = uniqueName('instances');
    const [first, other] = folders as [string, string];
    const start = (stateDir: string) =>
      startOffline(testBrokers(), PIPELINE_FILE, ['--state-dir', stateDir, '--generate', '50', '--for', '120'], { TEST_PIPELINE_NAME: name });

    const running = start(first);
    await expect.poll(running.output, { timeout: 60_000, interval: 100 }).toContain('Running');

    const sameState = start(first);
    expect(await exitCode(sameState, 60_000)).not.toBe(0);
    expect(sameState.output()).toContain(`Pipeline ${name} already runs on the state in ${first} (pid ${running.child.pid} on `);
    expect(sameState.output()).toContain('Stop that instance first');

    const ownState = start(other);
    expect(await exitCode(ownState, 60_000)).not.toBe(0);
    expect(ownState.output()).toContain(`Another instance of pipeline ${name} runs on this broker (pid ${running.child.pid} on `);
    expect(ownState.output()).toContain('Two instances would both process the input and break exactly-once');
    expect(running.child.exitCode, 'the first instance runs on').toBeNull();

    running.child.kill('SIGKILL');
    await exitCode(running, 10_000);
    const successor = start(first);
    await expect.poll(successor.output, { timeout: 60_000, interval: 100 }).toContain('Running');
    successor.child.kill('SIGTERM');
    expect(await exitCode(successor, 30_000), successor.output()).toBe(0);

    // Stopped cleanly, it said so on the broker: another state may start at once.
    const next = start(other);
    await expect.poll(next.output, { timeout: 60_000, interval: 100 }).toContain('Running');
    next.child.kill('SIGTERM');
    expect(await exitCode(next, 30_000), next.output()).toBe(0);
  }, 300_000);
});
