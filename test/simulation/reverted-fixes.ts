// `npm run simulate:reverted -- [--schedules 2000] [--seed 1] [--only NAME]`: the proof that the simulation
// reaches each hole it was built to find. For every fix of the runtime, it copies the sources
// with that one fix undone, runs the simulation there over the schedules `npm test` runs, and
// prints how many failed and the first failing seed (docs/PROTOCOL.md, "What the simulation
// found"). A fix whose revert no schedule notices is reported too: nothing proves it yet.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';

interface Edit {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
}

interface Revert {
  readonly fix: string;
  /** Found only in schedules that restore mid-run, which `npm test` runs as a campaign of their own. */
  readonly restores?: boolean;
  readonly edits: readonly Edit[];
}

/** Each fix, and the smallest edits that undo it. */
const REVERTS: readonly Revert[] = [
  {
    fix: 'claims conditional on the committed epoch',
    edits: [{ file: 'lib/state/shard-store.ts', find: 'return current?.epoch === condition.epoch && current.committedEpoch === condition.committedEpoch;', replace: 'return current?.epoch === condition.epoch;' }],
  },
  {
    fix: 'the held input watermark of a repartition stage',
    edits: [{ file: 'lib/runtime/shard-batch.ts', find: '  if (waiting && (await log.readThrough(next, waiting.until))) {', replace: '  if (offered > -Infinity) return { applied: offered, held: undefined };\n  if (waiting && (await log.readThrough(next, waiting.until))) {' }],
  },
  {
    // The CI failure of two-stage seed 161: an open transaction ahead of committed records hid them.
    fix: "the held input watermark waiting for the log's end, not its last stable offset",
    edits: [{ file: 'lib/runtime/processor.ts', find: 'end: () => reader.logEnd(topic, partition),', replace: "end: async () => Number((await this.options.kafka.admin.describeTopics([topic]))[0]?.partitions[partition]?.stable ?? 0)," }],
  },
  {
    fix: 'idle shards left out of their stage watermark (hole 4)',
    edits: [{ file: 'lib/runtime/coordinator-decision.ts', find: 'if (shardProgress?.acknowledgedIdle !== true) {', replace: 'if (shardProgress?.acknowledgedIdle !== "never") {' }],
  },
  {
    // A keyed-in-place shard that turned idle with a window open fired it only when its partition sent again.
    fix: "idle shards following their stage's active watermark, which stays below their timers",
    restores: true,
    edits: [
      { file: 'lib/runtime/shard-batch.ts', find: 'stageWatermark > own && (await context.idle(executor))', replace: 'stageWatermark > own && false' },
      { file: 'lib/runtime/coordinator-decision.ts', find: 'if (timer !== undefined) belowTimers.set(', replace: 'if (timer === -1) belowTimers.set(' },
    ],
  },
  {
    // Before, the invocation failed, until the checkpoint its own slot waited for completed.
    fix: 'a busy slot only acknowledging',
    edits: [
      {
        file: 'lib/runtime/processor.ts',
        find: '(p) => !this.knownCommitted(p) && p.handle.transactionalId === this.transactionalId(stage, shard, claim.epoch),',
        replace: "(p) => { if (!this.knownCommitted(p) && p.handle.transactionalId === this.transactionalId(stage, shard, claim.epoch)) throw new Error('busy slot'); return false; },",
      },
    ],
  },
  {
    fix: "a rolled-back stage's held committed watermark (hole 3)",
    edits: [{ file: 'lib/runtime/rollback-requests.ts', find: '  for (const request of requests) {\n    if (request.checkpoint > checkpoint) continue;', replace: '  for (const request of requests.slice(0, 0)) {\n    if (request.checkpoint > checkpoint) continue;' }],
  },
  {
    fix: 'a stale commit run leaving a committed checkpoint alone (hole 1)',
    edits: [{ file: 'lib/runtime/rollback-requests.ts', find: '    if (current.committed >= lost.checkpoint) return undefined;\n', replace: '' }],
  },
  {
    fix: 'both of hole 1: neither the checkpoint check nor the log',
    edits: [
      { file: 'lib/runtime/rollback-requests.ts', find: '    if (current.committed >= lost.checkpoint) return undefined;\n', replace: '' },
      { file: 'lib/testing/kafka-twin.ts', find: "if (error instanceof TransactionLostError && committed) return 'already-committed';", replace: '' },
    ],
  },
  {
    fix: 'a lost verdict checked against the log (hole 1, before the mark)',
    edits: [{ file: 'lib/testing/kafka-twin.ts', find: "if (error instanceof TransactionLostError && committed) return 'already-committed';", replace: '' }],
  },
  {
    fix: "the coordinator's re-read before the manifest (hole 2)",
    edits: [{ file: 'lib/runtime/coordinator.ts', find: "    if (confirmed.version !== record.version) return { outcome: 'waiting', record: confirmed };\n", replace: '' }],
  },
  {
    fix: 'the lingering sweep 16 ids at a time',
    edits: [{ file: 'lib/runtime/processor.ts', find: 'const SWEEP_CONCURRENCY = 16;', replace: 'const SWEEP_CONCURRENCY = 1;' }],
  },
  {
    fix: "the sweep's re-read of a stale coordinator record before it skips a slot",
    edits: [{ file: 'lib/runtime/processor.ts', find: '      stillPending = pending.filter((p) => p.checkpoint > committed);\n', replace: '' }],
  },
  {
    fix: 'the sweep of the own slot by an invocation that writes no transaction',
    edits: [
      {
        file: 'lib/runtime/processor.ts',
        find: '    if (!initialisesOwnSlot && claim.epoch - this.poolSize > claim.committedEpoch) failedIds.add(this.transactionalId(stage, shard, claim.epoch));\n',
        replace: '',
      },
    ],
  },
  {
    // The ownership check back before the initialisation of the id.
    fix: 'the id initialised before the ownership check (the zombie)',
    edits: [
      {
        file: 'lib/runtime/processor.ts',
        find: '    const transactionalId = this.transactionalId(stage, shard, epoch);\n',
        replace: '    const transactionalId = this.transactionalId(stage, shard, epoch);\n    const owned = (await this.options.store.peek(shard))?.epoch === epoch;\n',
      },
      { file: 'lib/runtime/processor.ts', find: '    if ((await this.options.store.peek(shard))?.epoch !== epoch) {\n      await writer.close();', replace: '    if (!owned) {\n      await writer.close();' },
    ],
  },
  {
    // The shard store's reread took a landed commit for fenced once a newer claim had come, and the processor aborted the transaction it names.
    fix: 'a landed commit done even after a newer claim',
    edits: [
      {
        file: 'lib/state/shard-store.ts',
        find: '      if (!current || !isCommitted(current, claim.epoch)) throw new ShardFencedError(claim.shard, claim.epoch);\n',
        replace: '      if (current?.epoch !== claim.epoch || current.committedEpoch !== claim.epoch) throw new ShardFencedError(claim.shard, claim.epoch);\n',
      },
    ],
  },
];

const { values } = parseArgs({ options: { schedules: { type: 'string', default: '2000' }, seed: { type: 'string', default: '1' }, only: { type: 'string' } } });
const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

function edit(source: string, find: string, replace: string, where: string): string {
  if (source.split(find).length !== 2) throw new Error(`${where}: the fix's code was not found exactly once; update REVERTS`);
  return source.replace(find, replace);
}

async function measure(revert: Revert): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-revert-'));
  try {
    for (const entry of ['lib', 'test', 'package.json', 'tsconfig.json']) await cp(join(root, entry), join(dir, entry), { recursive: true });
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
    for (const { file, find, replace } of revert.edits) {
      const path = join(dir, file);
      await writeFile(path, edit(await readFile(path, 'utf8'), find, replace, revert.fix));
    }
    const started = Date.now();
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'test/simulation/run.ts', '--schedules', values.schedules, '--seed', values.seed, '--no-shrink', ...(revert.restores ? ['--restores'] : [])],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }));
    const failed = /(\d+) passed, (\d+) failed/.exec(stdout)?.[2] ?? '?';
    const failures = [...stdout.matchAll(/FAILED seed (\d+): ([^\n]*)/g)].map((match) => ({ seed: Number(match[1]), problem: match[2] ?? '' }));
    const first = failures.sort((a, b) => a.seed - b.seed)[0];
    const seconds = Math.round((Date.now() - started) / 1000);
    const saw = first ? `seed ${first.seed}: ${first.problem.split('; ')[0]?.slice(0, 90) ?? ''}` : 'none';
    return `| ${revert.fix}${revert.restores ? ' (with restores)' : ''} | ${failed} | ${saw} | ${seconds} s |`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

process.stdout.write(`With each fix reverted alone, over ${values.schedules} schedules from seed ${values.seed}:\n\n| fix | failing schedules | first, and what it saw | took |\n| --- | --- | --- | --- |\n`);
for (const revert of REVERTS) {
  if (values.only !== undefined && !revert.fix.includes(values.only)) continue;
  process.stdout.write(`${await measure(revert)}\n`);
}
