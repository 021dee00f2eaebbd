// `npm run simulate -- --schedules 10000 [--seed 1] [--minutes 5] [--workers 2]`: deterministic
// simulation of the whole runtime (test/simulation/world.ts). Prints each failing seed with a
// one-line command that replays its shrunk schedule, and ends with `N passed, M failed`.
// `npm run simulate -- --replay SEED [--orders N] [--fault-steps F]` runs one schedule again,
// exactly, and prints its trace. `--no-shrink` reports failing seeds without shrinking them.
// `--kind one-stage|two-stage|three-stage|join|broadcast|broadcast-forward|sql-upsert` runs every schedule with that
// pipeline instead of the drawn one. `--restores` lets a tenth of the schedules take a savepoint
// and restore it mid-run, half of them into a grown source. `--output-commit on-checkpoint|per-batch`
// runs every schedule with that output commit instead of the drawn one; `--tick-grace` and
// `--no-tick-grace` make every schedule's coordinator tick lagging shards after a period, or at once;
// `--kafka-errors R` makes R of each invocation's Kafka requests fail (refused, or timed out after
// the broker applied them), instead of the drawn rate.
// `--ledger FILE` keeps a ledger of the run (test/simulation/ledger.ts): run again with the same
// flags, it resumes after the seeds that have run, as long as the simulated code is the same;
// a release run of a million schedules goes on over as many sittings as it takes. Keep a release
// run's ledger under test/simulation/ledgers/ and commit it at the end of each sitting: a sitting
// on a fresh machine starts from a clean clone, and a ledger left in .sluice/ is gone.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { OutputCommit } from '../../lib/api/index.js';
import { SCHEDULE_KINDS, type ScheduleKind } from '../helpers/order-totals-kinds.js';
import { runCampaign } from './campaign.js';
import { CampaignLedger, LedgerMismatchError, type LedgerRun } from './ledger.js';
import { drawSchedule } from './schedule.js';
import { simulate } from './world.js';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    minutes: { type: 'string', default: '60' },
    workers: { type: 'string', default: String(availableParallelism()) },
    replay: { type: 'string' },
    orders: { type: 'string' },
    'fault-steps': { type: 'string' },
    'no-shrink': { type: 'boolean', default: false },
    kind: { type: 'string' },
    restores: { type: 'boolean', default: false },
    'output-commit': { type: 'string' },
    'tick-grace': { type: 'boolean' },
    'no-tick-grace': { type: 'boolean' },
    'kafka-errors': { type: 'string' },
    ledger: { type: 'string' },
  },
});

function wholeNumber(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    process.stderr.write(`--${name} takes a whole number, not ${text}\n`);
    process.exit(2);
  }
  return value;
}

function rate(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    process.stderr.write(`--${name} takes a rate from 0 to 1, not ${text}\n`);
    process.exit(2);
  }
  return value;
}

function scheduleKind(text: string | undefined): ScheduleKind | undefined {
  if (text === undefined) return undefined;
  if (!(text in SCHEDULE_KINDS)) {
    process.stderr.write(`--kind takes one of ${Object.keys(SCHEDULE_KINDS).join(', ')}, not ${text}\n`);
    process.exit(2);
  }
  return text as ScheduleKind;
}

function outputCommit(text: string | undefined): OutputCommit | undefined {
  if (text === undefined) return undefined;
  const modes: readonly string[] = Object.values(OutputCommit);
  if (!modes.includes(text)) {
    process.stderr.write(`--output-commit takes one of ${modes.join(', ')}, not ${text}\n`);
    process.exit(2);
  }
  return text as OutputCommit;
}

const kind = scheduleKind(values.kind);
const commit = outputCommit(values['output-commit']);
const overrides = {
  ...(kind === undefined ? {} : { kind }),
  ...(values.orders === undefined ? {} : { orders: wholeNumber('orders', values.orders) }),
  ...(values['fault-steps'] === undefined ? {} : { faultSteps: wholeNumber('fault-steps', values['fault-steps']) }),
  ...(values.restores ? { restores: true } : {}),
  ...(commit === undefined ? {} : { outputCommit: commit }),
  ...(values['tick-grace'] ? { tickGrace: true } : values['no-tick-grace'] ? { tickGrace: false } : {}),
  ...(values['kafka-errors'] === undefined ? {} : { kafkaErrors: rate('kafka-errors', values['kafka-errors']) }),
};

if (values.replay !== undefined) {
  const config = drawSchedule(wholeNumber('replay', values.replay) ?? 0, overrides);
  const result = await simulate(config, { trace: true });
  process.stdout.write(`${result.trace.join('\n')}\n\n${JSON.stringify(config)}\n`);
  process.stdout.write(result.problems.length === 0 ? 'every invariant held\n' : `${result.problems.join('\n')}\n`);
  process.stdout.write(`${result.problems.length === 0 ? 1 : 0} passed, ${result.problems.length === 0 ? 0 : 1} failed\n`);
  process.exitCode = result.problems.length === 0 ? 0 : 1;
} else {
  const schedules = wholeNumber('schedules', values.schedules) ?? 0;
  const firstSeed = wholeNumber('seed', values.seed) ?? 1;
  const ledger = values.ledger === undefined ? undefined : openLedger(values.ledger, { firstSeed, schedules, overrides });
  if (ledger) {
    process.stdout.write(`${values.ledger}: ${ledger.done} of ${schedules} schedules ran in ${ledger.legs - 1} earlier legs; resuming at seed ${ledger.nextSeed}\n`);
    // A kill between saves loses only the schedules since the last one.
    for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15]] as const) {
      process.once(signal, () => {
        ledger.save();
        process.exit(128 + number);
      });
    }
  }
  const started = Date.now();
  const report = await runCampaign({
    firstSeed: ledger?.nextSeed ?? firstSeed,
    schedules: ledger?.remaining ?? schedules,
    deadline: started + (wholeNumber('minutes', values.minutes) ?? 60) * 60_000,
    workers: wholeNumber('workers', values.workers) ?? 0,
    overrides,
    shrink: !values['no-shrink'],
    onFailure: (failure) =>
      process.stdout.write(`FAILED seed ${failure.seed}: ${failure.problems.slice(0, 3).join('; ')}\n  replay: ${failure.replay}\n`),
    onSchedule: (seed, problems, result) => ledger?.record(seed, { problems, result }),
    onProgress: (ran, failed) => {
      if (ran % 1000 !== 0) return;
      ledger?.save();
      process.stdout.write(`${ran} schedules, ${failed} failed, ${Math.round((Date.now() - started) / 1000)} s\n`);
    },
  });
  ledger?.save();
  process.stdout.write(summary(report.ran, report.durationMs, report.totals, report.failures.length));
  if (ledger) {
    process.stdout.write(
      `the ledger's run: ${summary(ledger.done, ledger.durationMs, ledger.totals, ledger.failures.length)}` +
        `${ledger.complete ? `complete, over ${ledger.legs} legs` : `${ledger.remaining} schedules to go: run the same command again`}\n`,
    );
    for (const { seed, problems } of ledger.failures) process.stdout.write(`FAILED seed ${seed}: ${problems.slice(0, 3).join('; ')}\n`);
  }
  const failed = ledger ? ledger.failures.length : report.failures.length;
  process.exitCode = failed > 0 || (ledger ? !ledger.complete : report.ran < schedules) ? 1 : 0;
}

function openLedger(path: string, run: LedgerRun): CampaignLedger {
  try {
    return CampaignLedger.open(path, run);
  } catch (error) {
    if (!(error instanceof LedgerMismatchError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

function summary(ran: number, durationMs: number, totals: Readonly<Record<string, number>>, failed: number): string {
  return (
    `${ran} schedules in ${(durationMs / 1000).toFixed(1)} s: ${totals.steps ?? 0} requests, ${totals.invocations ?? 0} ` +
    `invocations, ${totals.checkpoints ?? 0} checkpoints, ${totals.rests ?? 0} rests, ${totals.rollbacks ?? 0} rollbacks, ${totals.restores ?? 0} restores; ` +
    `injected ${totals.crashes ?? 0} crashes, ` +
    `${totals.outages ?? 0} coordinator outages, ` +
    `${totals.stalls ?? 0} stalls, ${totals.throttled ?? 0} throttled and ${totals.ambiguous ?? 0} ambiguous requests, ` +
    `${totals.kafkaErrors ?? 0} Kafka requests failed (${totals['error KafkaRequestRefused'] ?? 0} refused, ${totals['error KafkaRequestTimedOut'] ?? 0} timed out); ` +
    `${totals.nestedAborts ?? 0} nested aborted output transactions read past; ` +
    `${totals.deadLetters ?? 0} malformed orders dead-lettered, ${totals.lateOrders ?? 0} stragglers written late and ${totals.stragglersCounted ?? 0} counted on time\n` +
    `${ran - failed} passed, ${failed} failed\n`
  );
}
