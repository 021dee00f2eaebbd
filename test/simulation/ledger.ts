// The ledger of a long simulation campaign (`npm run simulate -- --ledger FILE`): which seeds
// have run, against which code, and what they found. A release run of a million schedules
// outlasts a working session on a small machine; with a ledger it stops (at --minutes, or
// killed) and resumes later, and still counts as one run of one version of the code.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addTotals, type ScheduleCounts } from './campaign.js';
import type { ScheduleOverrides } from './schedule.js';

const REPOSITORY = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Where the simulation's workers start: every file it runs is reachable from these. */
const ENTRY_POINTS = ['test/simulation/campaign-worker.ts', 'test/simulation/world.ts'];
export const RELATIVE_IMPORT = /(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\s*\(?'(\.{1,2}\/[^']+)'/g;

/** The TypeScript files the simulation loads, found by following relative imports from its entry points. */
export function simulatedSources(entryPoints: readonly string[] = ENTRY_POINTS): string[] {
  const found = new Set<string>();
  const pending = entryPoints.map((entry) => resolve(REPOSITORY, entry));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (found.has(file)) continue;
    found.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)) {
      const specifier = (match[1] ?? match[2]) as string;
      pending.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  }
  return [...found].map((file) => relative(REPOSITORY, file)).sort();
}

/** A digest of the simulated code: the runtime and its twins, the harness, the pipelines. */
export function codeFingerprint(): string {
  const hash = createHash('sha256');
  for (const file of simulatedSources()) hash.update(`${file}\0`).update(readFileSync(resolve(REPOSITORY, file))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export interface LedgerFailure {
  readonly seed: number;
  readonly problems: readonly string[];
}

/** The run a ledger records; a ledger resumes only the same run. */
export interface LedgerRun {
  readonly firstSeed: number;
  readonly schedules: number;
  readonly overrides: ScheduleOverrides;
}

interface LedgerData extends LedgerRun {
  readonly code: string;
  /** How many seeds from `firstSeed` on have all run: the run resumes after them. */
  done: number;
  failures: LedgerFailure[];
  totals: Record<string, number>;
  /** Each stretch of the run: when it started, how many schedules it added, how long it took. */
  legs: { started: string; ran: number; durationMs: number }[];
}

export class LedgerMismatchError extends Error {
  override readonly name = 'LedgerMismatchError';
}

type Outcome = { readonly problems: readonly string[]; readonly result: ScheduleCounts };

export class CampaignLedger {
  /** Seeds past `done` that finished before an earlier one: folded in once every seed before them has. */
  private readonly ahead = new Map<number, Outcome>();
  private readonly leg: LedgerData['legs'][number];
  private readonly legStarted = Date.now();

  private constructor(
    readonly path: string,
    private readonly data: LedgerData,
  ) {
    this.leg = { started: new Date(this.legStarted).toISOString(), ran: 0, durationMs: 0 };
    data.legs.push(this.leg);
  }

  /** The ledger at `path`, or a new one; one that records another run or other code is an error naming the fix. */
  static open(path: string, run: LedgerRun): CampaignLedger {
    const code = codeFingerprint();
    if (!existsSync(path)) {
      return new CampaignLedger(path, { ...run, code, done: 0, failures: [], totals: {}, legs: [] });
    }
    const data = JSON.parse(readFileSync(path, 'utf8')) as LedgerData;
    const recorded = JSON.stringify({ firstSeed: data.firstSeed, schedules: data.schedules, overrides: data.overrides });
    const asked = JSON.stringify({ firstSeed: run.firstSeed, schedules: run.schedules, overrides: run.overrides });
    if (recorded !== asked) {
      throw new LedgerMismatchError(`${path} records the run ${recorded}, not ${asked}: give the same flags to resume it, or another --ledger file`);
    }
    if (data.code !== code) {
      throw new LedgerMismatchError(
        `${path} ran against other code (fingerprint ${data.code}; this checkout's is ${code}): a release run covers one version, ` +
          `so start a new ledger file, or check out the code it ran`,
      );
    }
    return new CampaignLedger(path, data);
  }

  get nextSeed(): number {
    return this.data.firstSeed + this.data.done;
  }

  get remaining(): number {
    return this.data.schedules - this.data.done;
  }

  get complete(): boolean {
    return this.remaining === 0;
  }

  get failures(): readonly LedgerFailure[] {
    return this.data.failures;
  }

  get totals(): Readonly<Record<string, number>> {
    return this.data.totals;
  }

  get done(): number {
    return this.data.done;
  }

  get legs(): number {
    return this.data.legs.length;
  }

  /** The run's time so far, over every leg. */
  get durationMs(): number {
    return this.data.legs.reduce((sum, leg) => sum + leg.durationMs, 0);
  }

  record(seed: number, outcome: Outcome): void {
    this.ahead.set(seed, outcome);
    for (let next = this.ahead.get(this.nextSeed); next; next = this.ahead.get(this.nextSeed)) {
      this.ahead.delete(this.nextSeed);
      if (next.problems.length > 0) this.data.failures.push({ seed: this.nextSeed, problems: next.problems });
      addTotals(this.data.totals, next.result);
      this.data.done++;
      this.leg.ran++;
    }
  }

  /** Writes the ledger whole, then renames it over the old one: a kill mid-write leaves the last one. */
  save(): void {
    this.leg.durationMs = Date.now() - this.legStarted;
    const temporary = `${this.path}.writing`;
    writeFileSync(temporary, `${JSON.stringify(this.data, null, 1)}\n`);
    renameSync(temporary, this.path);
  }
}
