// The deterministic simulation in `npm test`: thousands of seeded schedules of the whole
// runtime (test/simulation/world.ts), and the schedules that found each hole, pinned.
import { describe, expect, it } from 'vitest';
import { OutputCommit } from '../../lib/api/index.js';
import { runCampaign } from './campaign.js';
import { drawSchedule } from './schedule.js';
import { simulate } from './world.js';

const SCHEDULES = 2_000;
const TWO_INPUT_SCHEDULES = 500;

/**
 * For each fix, the first seed that failed among 2,000 with that fix reverted alone (the rest of
 * the runtime as it is now, the seed's streams split by kind of draw): `npm run simulate:reverted`
 * measures them again, and `npm run simulate -- --replay SEED` shows the interleaving. The seeds
 * marked "before the split" were found while one stream drew everything; they no longer replay
 * the interleaving that found their hole, and stay as regression seeds. Holes 1 to 3 are also
 * pinned by scripted interleavings in stale-actors.test.ts.
 */
const PINNED = [
  { hole: 'claims conditional on the committed epoch too', seed: 2 },
  { hole: 'the held input watermark of a repartition stage', seed: 1 },
  { hole: "the held input watermark waiting for the log's end, not its last stable offset (found by CI's two-stage seed 161)", seed: 280 },
  { hole: 'idle shards left out of their stage watermark (hole 4)', seed: 14 },
  { hole: 'a busy slot only acknowledging', seed: 25 },
  { hole: "a rolled-back stage's held committed watermark (hole 3)", seed: 698 },
  { hole: 'a stale commit run leaving a committed transaction alone (hole 1)', seed: 129 },
  { hole: 'both checks of hole 1', seed: 16 },
  { hole: 'a lost verdict checked against the log (a zombie fenced a committed transaction)', seed: 874 },
  { hole: "the coordinator's re-read before the manifest (hole 2)", seed: 8 },
  { hole: 'the id initialised before the ownership check (the zombie)', seed: 252 },
  { hole: 'a landed commit done even after a newer claim', seed: 598 },
  { hole: 'the lingering sweep 16 ids at a time (found at seed 101397 of a 50,000-schedule run, before the split)', seed: 101_397, beforeSplit: true },
  { hole: "the sweep's re-read of a stale coordinator record before it skips a slot (before the split)", seed: 2434, beforeSplit: true },
  { hole: "the sweep of the own slot by an invocation that writes no transaction (found at seed 116708 of a 50,000-schedule run, before the split)", seed: 116_708, beforeSplit: true },
  { hole: "the rollback's markers on completed checkpoints only, at once (found at seed 6224 of a 10,000-schedule run, before the split)", seed: 6_224, beforeSplit: true },
];

/** The same for schedules that restore mid-run; all but the first were found before the split. */
const PINNED_RESTORES = [
  { hole: "idle shards following their stage's active watermark, which stays below their timers", seed: 676 },
  { hole: 'a savepoint of a checkpoint that a commit function left halfway', seed: 180, beforeSplit: true },
  { hole: "the restored watermark of a grown source: the stage's, not the lowest of every shard", seed: 114, beforeSplit: true },
  { hole: "the rolled-back markers put before the rollback's commit (a crash between them left none)", seed: 298, beforeSplit: true },
  { hole: "the rolled-back markers put before the rollback's commit (a crash between them left none)", seed: 569, beforeSplit: true },
  { hole: 'an invocation claiming a shard during the restore: RestoreInterruptedError, run again', seed: 536, beforeSplit: true },
  { hole: "the restore's sweep of every transactional id of each shard it claims", seed: 1876, beforeSplit: true },
  { hole: "idle shards following their stage's active watermark (before the split)", seed: 1122, beforeSplit: true },
];

/**
 * The seeds pinned before the split were found before schedules drew per-batch output commit,
 * the tick grace and small internal limits: they run without them. The others run as drawn.
 */
const AS_FOUND = { outputCommit: OutputCommit.ON_CHECKPOINT, tickGrace: false, limits: {}, kafkaErrors: 0, badInput: undefined };
const drawnAs = (beforeSplit: boolean | undefined) => (beforeSplit ? AS_FOUND : { kafkaErrors: 0, badInput: undefined });

describe('the deterministic simulation', () => {
  it(`holds every invariant over ${SCHEDULES.toLocaleString('en')} seeded schedules`, async () => {
    const report = await runCampaign({ firstSeed: 1, schedules: SCHEDULES, workers: 2 });
    expect(report.failures.map((f) => `seed ${f.seed}: ${f.problems.slice(0, 3).join('; ')} (${f.replay})`)).toEqual([]);
    expect(report.ran).toBe(SCHEDULES);
    // The schedules reach what the invariants are about: crashes, stale actors, lost transactions and their rollbacks.
    expect(report.totals.crashes).toBeGreaterThan(1_000);
    expect(report.totals.stalls).toBeGreaterThan(500);
    expect(report.totals.ambiguous).toBeGreaterThan(1_000);
    expect(report.totals.rollbacks).toBeGreaterThan(50);
    expect(report.totals.checkpoints).toBeGreaterThan(10_000);
    // And output whose aborted transactions nest, which a read_committed reader must read past (docs/api.md).
    expect(report.totals.nestedAborts).toBeGreaterThan(5);
    // And bad input both ways: dead letters, stragglers the watermark had passed, and stragglers it had not.
    expect(report.totals.deadLetters).toBeGreaterThan(100);
    expect(report.totals.lateOrders).toBeGreaterThan(100);
    expect(report.totals.stragglersCounted).toBeGreaterThan(10);
  }, 300_000);

  it(`holds every invariant over ${SCHEDULES.toLocaleString('en')} seeded schedules, a tenth of them restoring a savepoint mid-run`, async () => {
    const report = await runCampaign({ firstSeed: 1, schedules: SCHEDULES, workers: 2, overrides: { restores: true } });
    expect(report.failures.map((f) => `seed ${f.seed}: ${f.problems.slice(0, 3).join('; ')} (${f.replay})`)).toEqual([]);
    expect(report.ran).toBe(SCHEDULES);
    expect(report.totals.restores).toBeGreaterThan(150);
  }, 300_000);

  it.each([
    ['a window join (two inputs through one repartition topic)', 'join'],
    ['a broadcast to a keyed stage (two inputs through one repartition topic)', 'broadcast'],
    ['a broadcast to a non-keyed stage (two inputs through one repartition topic)', 'broadcast-forward'],
    ["a Flink SQL GROUP BY's updates into an upsert sink", 'sql-upsert'],
    ['three stages, each watermarked by the one before it', 'three-stage'],
  ] as const)(`holds every invariant over ${TWO_INPUT_SCHEDULES} schedules of %s`, async (_, kind) => {
    const report = await runCampaign({ firstSeed: 1, schedules: TWO_INPUT_SCHEDULES, workers: 2, overrides: { kind } });
    expect(report.failures.map((f) => `seed ${f.seed}: ${f.problems.slice(0, 3).join('; ')} (${f.replay})`)).toEqual([]);
    expect(report.ran).toBe(TWO_INPUT_SCHEDULES);
    expect(report.totals.crashes).toBeGreaterThan(1_000);
    expect(report.totals.rollbacks).toBeGreaterThan(10);
  }, 120_000);

  it('replays a schedule exactly: the same seed gives the same interleaving', async () => {
    const config = drawSchedule(42);
    const first = await simulate(config, { trace: true });
    const second = await simulate(config, { trace: true });
    expect(second.steps).toBe(first.steps);
    expect(second.trace).toEqual(first.trace);
    expect(first.problems).toEqual([]);
  });

  // Each seed found a hole while its fix was reverted (docs/PROTOCOL.md, "What the simulation found").
  it.each(PINNED)('pins $hole (seed $seed)', async ({ seed, beforeSplit }) => {
    expect((await simulate(drawSchedule(seed, drawnAs(beforeSplit)))).problems).toEqual([]);
  });

  // Not a hole in the runtime: the simulation judged the output before an idle partition, first
  // invoked late after a coordinator outage, had turned idle and let its windows fire.
  it('judges a schedule only once every source partition that turns idle has (found at seed 729087 of the release run)', async () => {
    const config = drawSchedule(729_087);
    expect(config.idlePartition).toBe(true);
    expect((await simulate(config)).problems).toEqual([]);
  });

  // The same for schedules that take a savepoint and restore it mid-run (npm run simulate -- --restores).
  it.each(PINNED_RESTORES)('pins $hole (seed $seed, with restores)', async ({ seed, beforeSplit }) => {
    const config = drawSchedule(seed, { ...drawnAs(beforeSplit), restores: true });
    expect(config.restore).toBeDefined();
    expect((await simulate(config)).problems).toEqual([]);
  });
});
