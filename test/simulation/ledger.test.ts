import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CampaignLedger, LedgerMismatchError, simulatedSources } from './ledger.js';

const folder = mkdtempSync(join(tmpdir(), 'sluice-ledger-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const run = { firstSeed: 10, schedules: 5, overrides: {} };
const passed = { problems: [], result: { counts: { invocations: 2, errors: {} }, steps: 7 } } as unknown as Parameters<CampaignLedger['record']>[1];
const failed = { ...passed, problems: ['a window written twice'] };

describe('a campaign ledger', () => {
  it('counts a seed as run once every seed before it has, and resumes after those alone', () => {
    const path = join(folder, 'resume.json');
    const first = CampaignLedger.open(path, run);
    first.record(11, failed);
    first.record(13, passed);
    expect(first.nextSeed).toBe(10);
    first.record(10, passed);
    expect([first.done, first.nextSeed, first.remaining]).toEqual([2, 12, 3]);
    expect(first.failures).toEqual([{ seed: 11, problems: ['a window written twice'] }]);
    expect(first.totals).toMatchObject({ invocations: 4, steps: 14 });
    first.save();

    // Seed 13 ran but 12 did not: the next leg runs both again, and counts 13 once.
    const second = CampaignLedger.open(path, run);
    expect([second.nextSeed, second.remaining, second.legs]).toEqual([12, 3, 2]);
    for (const seed of [12, 13, 14]) second.record(seed, passed);
    second.save();
    const third = CampaignLedger.open(path, run);
    expect([third.complete, third.done, third.legs]).toEqual([true, 5, 3]);
    expect(third.totals).toMatchObject({ invocations: 10, steps: 35 });
  });

  it('resumes only the same run of the same code, and says what to do otherwise', () => {
    const path = join(folder, 'mismatch.json');
    CampaignLedger.open(path, run).save();
    expect(() => CampaignLedger.open(path, { ...run, schedules: 6 })).toThrow(LedgerMismatchError);
    expect(() => CampaignLedger.open(path, { ...run, overrides: { restores: true } })).toThrow(/give the same flags to resume it/);
    const recorded = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...recorded, code: 'an older runtime' }));
    expect(() => CampaignLedger.open(path, run)).toThrow(/ran against other code .*start a new ledger file/);
  });

  it('fingerprints the code the simulation runs: the runtime, its twins and the Lambda event codec, not the AWS or offline adapters', () => {
    const sources = simulatedSources();
    expect(sources).toEqual(expect.arrayContaining(['lib/runtime/processor.ts', 'lib/state/shard-store.ts', 'lib/testing/kafka-twin.ts', 'test/simulation/world.ts']));
    // Batches reach the processor encoded as Lambda's event sources encode them and decoded as the handler does.
    expect(sources.filter((file) => /^lib\/(aws|offline|cli)\//.test(file))).toEqual(['lib/aws/kafka-event.ts', 'lib/offline/msk-event.ts']);
  });
});
