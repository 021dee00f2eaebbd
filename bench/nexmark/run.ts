// Nexmark on Sluice and on Flink, side by side, on the same events in the same Kafka topics:
// each query's committed output from both, compared; and each one's CPU per record.
//
//   npm run nexmark -- --events 1000000 [--query q0 --query q15] [--seed 1] [--batch 1000]
//   npm run nexmark -- --events 10000 --jsonl out/   (the events as JSON lines, and nothing else)
//
// Sluice runs as bench:handler runs it: its processor handler in this process, fed the bid
// topic's records `batch` a time, the emulators in another process, checkpoints between batches
// and outside the count, the first tenth left out. Flink runs the same SQL in one JVM at
// parallelism 1, reading the topics to their end, EXACTLY_ONCE into Kafka, after a warm-up job
// on a tenth of the events. Both read one partition, so both aggregate where they read.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { KafkaAdmin } from '../../lib/kafka/index.js';
import { acquireBrokers } from '../../lib/offline/kafka-broker.js';
import { buildFlinkJob, flinkCommand } from '../contenders/registry.js';
import { batchedEvents, EmulatorHost, perRecord, runSluice, runSluiceStages, type RunFigures } from '../handler.js';
import { benchTopic } from '../orders.js';
import { compareResults, resultRows, type Comparison } from './compare.js';
import { EXPECTED_EVENTS, EXPECTED_GENERATOR, inputsHash, readExpected, writeExpected } from './expected.js';
import { DEFAULT_NEXMARK, EVENT_KINDS, recentNexmark, type EventKind, type NexmarkOptions } from './generator.js';
import { eventTopic, GROUP_KEYS, isUpdating, JOIN_QUERIES, NEXMARK_QUERIES, nexmarkPipeline, nexmarkScript, NOT_RUN, sourceKinds, WINDOW_END_COLUMNS, type NexmarkQuery } from './queries.js';
import { committedOutput, loadNexmark, nexmarkRecords } from './topics.js';

const CHECKPOINT_INTERVAL_MS = 5_000;
const FLINK_PARALLELISM = 1;

export interface QueryFigures {
  readonly query: NexmarkQuery;
  /** The records the query read: the bid topic's, or a join's of each topic it reads. */
  readonly records: number;
  /** Which of Sluice's handlers the figure counts: the one stage that reads the bids, or every stage. */
  readonly stages: 'one' | 'all';
  readonly sluiceRecordsPerCoreSecond: number;
  readonly flinkRecordsPerCoreSecond: number;
  /** DynamoDB and S3 requests of the handler per 1,000 records read. */
  readonly requestsPer1000: number;
  readonly comparison: Comparison;
}

export interface NexmarkRunOptions {
  readonly brokers: readonly string[];
  readonly events: number;
  readonly queries: readonly NexmarkQuery[];
  readonly batch: number;
  readonly generator: NexmarkOptions;
  readonly say: (line: string) => void;
}

export async function runNexmark({ brokers, events, queries, batch, generator, say }: NexmarkRunOptions): Promise<QueryFigures[]> {
  const prefix = `nexmark-${Date.now().toString(36)}`;
  const warmUp = `${prefix}-warm`;
  say(`Loading ${events.toLocaleString('en')} events into ${prefix}-{person,auction,bid}, and a tenth into ${warmUp}-…`);
  const loaded = await loadNexmark(brokers, prefix, events, 1, generator);
  await loadNexmark(brokers, warmUp, Math.ceil(events / 10), 1, generator);
  const bids = [...nexmarkRecords(events, 1, generator)].flatMap(({ event, value, timestamp }) => (event.kind === 'bid' ? [{ bid: event.bid, value: Buffer.from(value), timestamp }] : []));
  // The handler reads the bid topic's records keyed as a producer keying them by the query's groups would.
  const handlerEvents = (query: NexmarkQuery) => {
    const keyOf = GROUP_KEYS[query];
    return batchedEvents(eventTopic(prefix, 'bid'), bids.map(({ bid, value, timestamp }) => ({ key: keyOf ? Buffer.from(keyOf(bid)) : null, value, timestamp })), batch, brokers);
  };
  buildFlinkJob(say);
  const scripts = mkdtempSync(join(tmpdir(), 'nexmark-'));
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const emulators = await EmulatorHost.start();
  const figures: QueryFigures[] = [];
  try {
    for (const query of queries) {
      const [flinkOut, warmOut, sluiceName] = [`${prefix}-${query}-flink`, `${warmUp}-${query}-flink`, `${prefix}-${query}-sluice`];
      const isJoin = (JOIN_QUERIES as readonly string[]).includes(query);
      const outputs = [flinkOut, warmOut, `${sluiceName}-out`, ...(isJoin ? [`${sluiceName}-warm-out`] : [])];
      await admin.ensureTopics(outputs.map((topic) => benchTopic(topic, 1)));
      const flinkScript = (input: string, output: string) => {
        const path = join(scripts, `${output}.sql`);
        writeFileSync(path, nexmarkScript(query, { brokers, prefix: input, output, checkpointIntervalMs: CHECKPOINT_INTERVAL_MS, forFlink: true }));
        return path;
      };
      const [, flinkCpuMs = 0] = await runFlink([flinkScript(warmUp, warmOut), flinkScript(prefix, flinkOut)]);
      const sluice = isJoin
        ? await runJoin(query, { brokers, emulators, batch, prefix, warmUp, name: sluiceName, records: readCount(query, loaded.counts) })
        : handlerFigures(
            await runSluice(brokers, emulators, 'EXACTLY_ONCE', batch, handlerEvents(query), sluiceName, eventTopic(prefix, 'bid'), (options) =>
              nexmarkPipeline(query, { brokers, prefix, output: options.output, checkpointIntervalMs: options.checkpointIntervalMs, inPlace: true }),
            ),
            batch,
          );
      const records = isJoin ? readCount(query, loaded.counts) : bids.length;
      say(`  ${query}: Flink ${Math.round(flinkCpuMs).toLocaleString('en')} ms of CPU, Sluice's handler ${sluice.microsPerRecord.toFixed(1)} µs a record; comparing the committed outputs`);
      const windowEnd = WINDOW_END_COLUMNS[query];
      const comparison = compareResults(await committedOutput(brokers, `${sluiceName}-out`), await committedOutput(brokers, flinkOut), {
        updating: isUpdating(query),
        ...(windowEnd ? { windowEnd: { ...windowEnd, finalWatermarkMs: loaded.finalWatermarkMs } } : {}),
      });
      const row: QueryFigures = {
        query,
        records,
        stages: isJoin ? 'all' : 'one',
        sluiceRecordsPerCoreSecond: 1e6 / sluice.microsPerRecord,
        flinkRecordsPerCoreSecond: records / (flinkCpuMs / 1_000),
        requestsPer1000: sluice.requestsPer1000,
        comparison,
      };
      figures.push(row);
      say(queryLine(row));
      await admin.deleteTopics(outputs).catch(() => undefined);
    }
  } finally {
    await emulators.stop();
    await admin.deleteTopics(EVENT_KINDS.flatMap((kind) => [eventTopic(prefix, kind), eventTopic(warmUp, kind)])).catch(() => undefined);
    await admin.close();
  }
  return figures;
}

/** Sluice's figures as the table gives them. */
interface SluiceFigures {
  readonly microsPerRecord: number;
  readonly requestsPer1000: number;
}

function handlerFigures(run: RunFigures, batch: number): SluiceFigures {
  return { microsPerRecord: perRecord(run), requestsPer1000: (Object.values(run.requests).reduce((a, b) => a + b, 0) / batch) * 1_000 };
}

/** How many events a query reads: those of every topic its pipeline has a source on. */
function readCount(query: NexmarkQuery, counts: Readonly<Record<EventKind, number>>): number {
  return sourceKinds(nexmarkPipeline(query, { brokers: ['127.0.0.1:9092'], prefix: 'count', output: 'count', checkpointIntervalMs: CHECKPOINT_INTERVAL_MS }), 'count').reduce(
    (sum, kind) => sum + counts[kind],
    0,
  );
}

/**
 * A join query on Sluice: every stage's handler over the topics as loaded (runSluiceStages),
 * after the same over the warm-up's topics, as Flink's job runs after its warm-up.
 */
async function runJoin(
  query: NexmarkQuery,
  { brokers, emulators, batch, prefix, warmUp, name, records }: { brokers: readonly string[]; emulators: EmulatorHost; batch: number; prefix: string; warmUp: string; name: string; records: number },
): Promise<SluiceFigures> {
  const pipeline = (input: string, output: string) => nexmarkPipeline(query, { brokers, prefix: input, output, checkpointIntervalMs: CHECKPOINT_INTERVAL_MS });
  await runSluiceStages(pipeline(warmUp, `${name}-warm-out`), brokers, emulators, batch, `${name}-warm`);
  const figures = await runSluiceStages(pipeline(prefix, `${name}-out`), brokers, emulators, batch, name);
  return { microsPerRecord: figures.cpuMicros / records, requestsPer1000: (figures.requests / records) * 1_000 };
}

/** Flink's CPU over each script, run one after the other in one JVM. */
async function runFlink(scripts: readonly string[]): Promise<number[]> {
  const [java, ...args] = flinkCommand('dev.sluice.bench.NexmarkSqlJob', String(FLINK_PARALLELISM), ...scripts);
  const { stdout } = await promisify(execFile)(java as string, args, { maxBuffer: 64 * 1024 * 1024 });
  const runs = stdout.split('\n').filter((line) => line.startsWith('{"script"')).map((line) => JSON.parse(line) as { cpuMs: number });
  if (runs.length !== scripts.length) throw new Error(`Flink ran ${runs.length} of ${scripts.length} scripts:\n${stdout}`);
  return runs.map((run) => run.cpuMs);
}

/** Flink's result rows of each query on the kept results' events (bench/nexmark/expected.ts). */
export async function flinkResults(brokers: readonly string[], queries: readonly NexmarkQuery[], say: (line: string) => void): Promise<Map<NexmarkQuery, string[]>> {
  const prefix = `nexmark-expected-${Date.now().toString(36)}`;
  await loadNexmark(brokers, prefix, EXPECTED_EVENTS, 1, EXPECTED_GENERATOR);
  buildFlinkJob(say);
  const scripts = mkdtempSync(join(tmpdir(), 'nexmark-'));
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const outputs = queries.map((query) => `${prefix}-${query}-flink`);
  try {
    await admin.ensureTopics(outputs.map((topic) => benchTopic(topic, 1)));
    await runFlink(
      queries.map((query, i) => {
        const path = join(scripts, `${query}.sql`);
        writeFileSync(path, nexmarkScript(query, { brokers, prefix, output: outputs[i] as string, checkpointIntervalMs: CHECKPOINT_INTERVAL_MS, forFlink: true }));
        return path;
      }),
    );
    const results = new Map<NexmarkQuery, string[]>();
    for (const [i, query] of queries.entries()) results.set(query, resultRows(await committedOutput(brokers, outputs[i] as string), { updating: isUpdating(query) }));
    return results;
  } finally {
    await admin.deleteTopics([...outputs, ...EVENT_KINDS.map((kind) => eventTopic(prefix, kind))]).catch(() => undefined);
    await admin.close();
  }
}

/** One line a script can read: `nexmark q5, records/s per core, Sluice handler ÷ Flink EXACTLY_ONCE: 1.34 (output equal)`. */
export function queryLine({ query, sluiceRecordsPerCoreSecond, flinkRecordsPerCoreSecond, comparison }: QueryFigures): string {
  const outcome = comparison.equal ? 'output equal' : `OUTPUT DIFFERS: Sluice ${comparison.sluice} rows, Flink ${comparison.flink}, ${comparison.difference ?? ''}`;
  return `nexmark ${query}, records/s per core, Sluice handler ÷ Flink EXACTLY_ONCE: ${(sluiceRecordsPerCoreSecond / flinkRecordsPerCoreSecond).toFixed(2)} (${outcome})`;
}

const thousands = (n: number) => Math.round(n).toLocaleString('en');

export function formatNexmark(figures: readonly QueryFigures[], events: number, batch: number): string {
  const bids = figures.find((f) => f.stages === 'one')?.records;
  return [
    `Nexmark, ${events.toLocaleString('en')} events${bids === undefined ? '' : ` (${bids.toLocaleString('en')} bids)`}, one partition, Sluice's handler at batch ${batch.toLocaleString('en')} and Flink 2.2 at parallelism 1, both EXACTLY_ONCE into Kafka. ${cpus().length} cores, ${cpus()[0]?.model ?? ''}, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| query | Sluice handler records/s per core | Flink EXACTLY_ONCE records/s per core | Sluice ÷ Flink | DynamoDB + S3 requests per 1,000 records | output |',
    '| --- | --- | --- | --- | --- | --- |',
    ...figures.map(
      (f) =>
        `| ${f.query}${f.stages === 'all' ? ' ¹' : ''} | ${thousands(f.sluiceRecordsPerCoreSecond)} | ${thousands(f.flinkRecordsPerCoreSecond)} | ${(f.sluiceRecordsPerCoreSecond / f.flinkRecordsPerCoreSecond).toFixed(2)} | ${f.requestsPer1000.toFixed(1)} | ${f.comparison.equal ? `equal (${f.comparison.flink.toLocaleString('en')} ${isUpdating(f.query) ? 'keys' : 'rows'})` : 'differs'} |`,
    ),
    '',
    "¹ A join: the events of every topic it reads, and every stage's handler, each shard's records a batch at a time from what the stage before committed, checkpoints between rounds outside the count.",
    ...Object.entries(NOT_RUN).map(([query, why]) => `- ${query} not run: ${why}.`),
    '',
    ...figures.map(queryLine),
  ].join('\n');
}

function writeJsonLines(directory: string, events: number, generator: NexmarkOptions): void {
  mkdirSync(directory, { recursive: true });
  const lines: Record<string, string[]> = { person: [], auction: [], bid: [] };
  for (const { kind, value } of nexmarkRecords(events, 1, generator)) lines[kind]?.push(value);
  for (const kind of EVENT_KINDS) writeFileSync(join(directory, `${kind}.jsonl`), `${(lines[kind] ?? []).join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '100000' },
      query: { type: 'string', multiple: true },
      seed: { type: 'string', default: String(DEFAULT_NEXMARK.seed) },
      batch: { type: 'string', default: '1000' },
      jsonl: { type: 'string' },
      expected: { type: 'string' },
    },
  });
  const events = Number(values.events);
  const generator = recentNexmark(Number(values.seed));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  if (values.jsonl) {
    writeJsonLines(values.jsonl, events, generator);
    say(`Wrote ${events.toLocaleString('en')} events to ${values.jsonl}/{person,auction,bid}.jsonl`);
  } else {
    const runnable: readonly string[] = [...NEXMARK_QUERIES, ...JOIN_QUERIES];
    const unknown = (values.query ?? []).filter((q) => !runnable.includes(q));
    if (unknown.length > 0) throw new Error(`unknown or not run: ${unknown.map((q) => `${q}${NOT_RUN[q] ? ` (${NOT_RUN[q]})` : ''}`).join(', ')}; the queries run are ${runnable.join(', ')}`);
    const queries = (values.query ?? runnable) as NexmarkQuery[];
    const { brokers, release } = await acquireBrokers();
    try {
      if (values.expected === 'write' || values.expected === 'check') {
        process.exitCode = keepExpected(await flinkResults(brokers, queries, say), values.expected, say);
      } else if (values.expected !== undefined) {
        throw new Error(`--expected takes write (keep Flink's results) or check (compare Flink's with those kept), not ${values.expected}`);
      } else {
        const batch = Number(values.batch);
        const report = formatNexmark(await runNexmark({ brokers, events, queries, batch, generator, say }), events, batch);
        mkdirSync('bench/results', { recursive: true });
        writeFileSync('bench/results/nexmark.md', `${report}\n`);
        say(`\n${report}\n\nWritten to bench/results/nexmark.md`);
      }
    } finally {
      await release();
    }
  }
}

/** Writes Flink's results, or compares them with those kept: the exit code. */
function keepExpected(results: ReadonlyMap<NexmarkQuery, string[]>, mode: 'write' | 'check', say: (line: string) => void): number {
  let failed = 0;
  for (const [query, rows] of results) {
    if (mode === 'write') {
      writeExpected(query, rows);
      say(`${query}: kept Flink's ${rows.length} rows`);
      continue;
    }
    const kept = readExpected(query);
    const same = kept?.hash === inputsHash(query) && JSON.stringify(kept.rows) === JSON.stringify(rows);
    if (!same) failed++;
    say(same ? `pass ${query}: Flink's ${rows.length} rows as kept` : `FAIL ${query}: Flink's result differs from the one kept, or its inputs changed: npm run nexmark -- --expected write`);
  }
  return failed > 0 ? 1 : 0;
}
