// The conformance suite's scenarios (one folder each: input.csv, the Flink job in Java and the
// Sluice pipeline in sluice.ts, or for a sql-* scenario the query in query.sql, and Flink's
// output in expected-by-flink.txt), how Sluice runs one, and how the Flink output's freshness is
// judged. No vitest here: run.ts uses it too.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  MAX_WATERMARK,
  MIN_WATERMARK,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  WatermarkEmission,
  WatermarkStrategy,
  type DataStream,
} from '../../lib/api/index.js';
import { Schema, StreamTableEnvironment, type ChangelogRow } from '../../lib/sql/index.js';
import { formatDate, formatWallClock } from '../../lib/sql/time.js';
import { doubleText } from '../../lib/sql/values.js';
import { OperatorTestHarness, PipelineTestHarness } from '../../lib/testing/index.js';
import type { Event } from './event.js';

export const CONFORMANCE_DIR = fileURLToPath(new URL('.', import.meta.url));
export const EXPECTED_FILE = 'expected-by-flink.txt';

export interface Scenario {
  readonly name: string;
  readonly folder: string;
  /** The Flink job's class, in dev.sluice.conformance: the folder's name in PascalCase, or `Sql` for a query. */
  readonly javaClass: string;
  /** Whether the scenario is a query (query.sql) over the table `events`, which Flink SQL runs. */
  readonly sql: boolean;
  /**
   * Whether the engines are compared by the table their changes leave, not by the changes: a
   * query.sql that says `-- compare the final table`, as one whose changes Flink orders as its
   * two inputs' buffers arrive (a join of two queries over one table).
   */
  readonly finalTable: boolean;
}

const QUERY_FILE = 'query.sql';
const FINAL_TABLE_MARK = '-- compare the final table';

export function scenarios(): Scenario[] {
  return readdirSync(CONFORMANCE_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(CONFORMANCE_DIR, entry.name, 'input.csv')))
    .map(({ name }) => {
      const query = join(CONFORMANCE_DIR, name, QUERY_FILE);
      const sql = existsSync(query);
      return {
        name,
        folder: join(CONFORMANCE_DIR, name),
        javaClass: sql ? 'Sql' : name.replace(/(^|-)(\w)/g, (_, __, letter: string) => letter.toUpperCase()),
        sql,
        finalTable: sql && readFileSync(query, 'utf8').includes(FINAL_TABLE_MARK),
      };
    });
}

/**
 * One line of input.csv (runner/InputLine.java reads the same): an event or a watermark of a
 * partition (0 unless a last column says), a partition its generator marks idle, or the
 * processing time set to `processingTime`.
 */
export type InputLine =
  | { readonly event: Event; readonly partition: number }
  | { readonly watermark: number; readonly partition: number }
  | { readonly idle: number }
  | { readonly processingTime: number };

export function parseInput(scenario: Scenario): InputLine[] {
  return parseInputLines(readFileSync(join(scenario.folder, 'input.csv'), 'utf8'), `${scenario.name}/input.csv`);
}

/** Input lines in input.csv's form; `source` names them in errors. */
export function parseInputLines(text: string, source: string): InputLine[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line): InputLine => {
      const [kind, ...fields] = line.split(',');
      switch (kind) {
        case 'watermark':
          return { watermark: Number(fields[0]), partition: Number(fields[1] ?? 0) };
        case 'idle':
          return { idle: Number(fields[0]) };
        case 'time':
          return { processingTime: Number(fields[0]) };
        case 'event': {
          const [key = '', value, timestamp, partition] = fields;
          return { event: { key, value: Number(value), timestamp: Number(timestamp) }, partition: Number(partition ?? 0) };
        }
        default:
          throw new Error(`${source}: unknown line "${line}"`);
      }
    });
}

/**
 * One output record as both sides print it: `timestamp<TAB>value`. The end of time is Java's
 * `Long.MAX_VALUE` on Flink's side (a global window's results carry it) and `MAX_WATERMARK` on Sluice's.
 */
export function line(timestamp: number | undefined, value: string): string {
  return `${timestamp === MAX_WATERMARK ? '9223372036854775807' : (timestamp ?? 'null')}\t${value}`;
}

type ScenarioPipeline = (events: DataStream<Event>) => DataStream<string>;

/**
 * The scenario through Sluice's harnesses, fed as Flink's runner feeds its job: each record with
 * its event time, each watermark line as a watermark, and the final watermark at the end.
 * Input from several partitions, or with idle ones, goes through the whole pipeline instead.
 */
export async function runOnSluice(scenario: Scenario): Promise<string[]> {
  if (scenario.sql) return runQueryOnSluice(scenario);
  const { default: build } = (await import(join(scenario.folder, 'sluice.ts'))) as { default: ScenarioPipeline };
  const input = parseInput(scenario);
  const partitioned = input.some((l) => 'idle' in l || ('partition' in l && l.partition > 0));
  return partitioned ? runOnPartitions(build, input) : runOnOperatorHarness(build, input);
}

function runOnOperatorHarness(build: ScenarioPipeline, input: readonly InputLine[]): string[] {
  return outputOfHarness(build, input).map(({ value, timestamp }) => line(timestamp, value));
}

function outputOfHarness(build: ScenarioPipeline, input: readonly InputLine[]) {
  const harness = OperatorTestHarness.of<Event, string>(build);
  let now = 0;
  for (const item of input) {
    if ('watermark' in item) harness.processWatermark(item.watermark);
    else if ('event' in item) harness.processElement(item.event, item.event.timestamp);
    else if ('processingTime' in item) {
      harness.advanceProcessingTime(item.processingTime - now);
      now = item.processingTime;
    } else throw new Error('idle lines run on partitions');
  }
  harness.processWatermark(Number.MAX_SAFE_INTEGER);
  return harness.output();
}

/** The table `events` a SQL scenario's query reads, as runner/SqlQueries.java declares it. */
const EVENTS_SCHEMA = Schema.newBuilder().column('k', 'STRING').column('v', 'BIGINT').columnByMetadata('ts', 'TIMESTAMP_LTZ(3)', 'rowtime').watermark('ts', 'SOURCE_WATERMARK()').build();

/** A change of a query's result as runner/SqlQueries.java prints Flink's: `+I[a, 1970-01-01 00:00:00.050, 3]`, times in UTC. */
function sqlLine(row: ChangelogRow, types: readonly string[]): string {
  const fields = Object.values(row.fields).map((value, i) => {
    const type = types[i] ?? '';
    if (value === null) return 'null';
    if (type.startsWith('TIMESTAMP')) return formatWallClock(value as number, 3);
    if (type.startsWith('DATE')) return formatDate(value as number);
    if (type.startsWith('DOUBLE')) return doubleText(value as number);
    return String(value);
  });
  return `${row.kind}[${fields.join(', ')}]`;
}

function runQueryOnSluice(scenario: Scenario): string[] {
  return runQuery(readFileSync(join(scenario.folder, QUERY_FILE), 'utf8'), parseInput(scenario));
}

/** A query over the table `events` through the Table API on Sluice, fed as the operator harness feeds a DataStream scenario. */
export function runQuery(query: string, input: readonly InputLine[]): string[] {
  return outputOfHarness(queryPipeline(query), input).map(({ value }) => value);
}

/** The query as a scenario's pipeline: the events as the table `events`, each change of the result as runner/SqlQueries.java prints it. */
export function queryPipeline(query: string): ScenarioPipeline {
  return (events) => {
    const tableEnv = StreamTableEnvironment.create(events.getExecutionEnvironment());
    tableEnv.createTemporaryView('events', tableEnv.fromDataStream(events.map(({ key, value }) => ({ k: key, v: value })), EVENTS_SCHEMA));
    // Statements before the query (CREATE VIEW …) end with a semicolon at the end of a line, as runner/SqlQueries.java splits them.
    const statements = query.trim().replace(/;$/, '').split(/;\s*\n/);
    for (const statement of statements.slice(0, -1)) tableEnv.executeSql(`${statement};`);
    const table = tableEnv.sqlQuery(statements[statements.length - 1] as string);
    const types = table.schema.map((column) => column.type);
    return tableEnv.toChangelogStream(table).map((row) => sqlLine(row, types));
  };
}

/**
 * The output as the two engines are compared: record for record, except that a query's changes
 * are compared as a set of lines, since Flink SQL emits one watermark's window results in an
 * order of its own (by key hash) where Sluice emits them by key.
 */
export function comparable(scenario: Scenario, lines: readonly string[]): string[] {
  if (scenario.finalTable) return finalTable(lines);
  return scenario.sql ? [...lines].sort() : [...lines];
}

/** The rows a changelog leaves, sorted: +I and +U add a row as `[…]`, -U and -D take one away. */
function finalTable(lines: readonly string[]): string[] {
  const rows: string[] = [];
  for (const line of lines) {
    const row = line.slice(2);
    const at = rows.indexOf(row);
    if (line.startsWith('+')) rows.push(row);
    else if (at < 0) rows.push(`${line} retracts a row the table does not hold`);
    else rows.splice(at, 1);
  }
  return rows.sort();
}

const INPUT_TOPIC = 'conformance-input';
/** An input line as a record of a source topic: an event, or a marker for its partition's generator. */
export type Marked = Event | { readonly watermark: number } | { readonly idle: true };

/** Turns marker records into their partition's watermarks and idle marks; events keep their event time. */
export const markerWatermarks = WatermarkStrategy.forGenerator<Marked>(() => ({
  onEvent: (marked, _timestamp, output) => {
    if ('watermark' in marked) output.emitWatermark(marked.watermark);
    if ('idle' in marked) output.markIdle();
  },
  onPeriodicEmit: () => undefined,
})).withTimestampAssigner((marked) => ('watermark' in marked ? marked.watermark : 'idle' in marked ? MIN_WATERMARK : marked.timestamp));

/**
 * A source topic with a partition per input partition, whose watermark generator turns the
 * marker records into each partition's watermarks and idle marks, emitted after every record:
 * the source stage combines the partitions, and the keyBy's stage after it the source stage's.
 */
function runOnPartitions(build: ScenarioPipeline, input: readonly InputLine[]): string[] {
  const env = StreamExecutionEnvironment.create({ name: 'conformance' }).setWatermarkEmission(WatermarkEmission.everyRecords(1));
  const source = KafkaSource.builder<Marked>()
    .setBootstrapServers('127.0.0.1:9092')
    .setTopics(INPUT_TOPIC)
    .setGroupId('conformance')
    .setValueOnlyDeserializer(new JsonDeserializationSchema<Marked>())
    .build();
  const events = env.fromSource(source, markerWatermarks, 'input').flatMap((marked) => ('key' in marked ? [marked] : []));
  build(events).sinkTo(
    KafkaSink.builder<string>()
      .setBootstrapServers('127.0.0.1:9092')
      .setRecordSerializer(KafkaRecordSerializationSchema.builder<string>().setTopic('conformance-output').setValueSerializationSchema(new SimpleStringSchema()).build())
      .build(),
  );
  const partitions = 1 + Math.max(...input.map((l) => ('partition' in l ? l.partition : 'idle' in l ? l.idle : 0)));
  const harness = new PipelineTestHarness(env, { sourcePartitions: { [INPUT_TOPIC]: Array.from({ length: partitions }, (_, p) => p) } });
  for (const item of input) {
    if ('processingTime' in item) throw new Error('time lines need one partition, as on the Flink side');
    const [marked, partition] = 'event' in item ? [item.event, item.partition] : 'watermark' in item ? [{ watermark: item.watermark }, item.partition] : [{ idle: true }, item.idle];
    harness.send(INPUT_TOPIC, [{ value: JSON.stringify(marked), partition }]);
  }
  harness.finish();
  return harness.output('conformance-output').map((record) => line(record.timestamp, record.value?.toString() ?? ''));
}

/** What Flink's output depends on: the runner, the build, and the scenario's job and input. */
export function inputsHash(scenario: Scenario): string {
  const hash = createHash('sha256');
  const runner = join(CONFORMANCE_DIR, 'runner');
  const files = [
    join(CONFORMANCE_DIR, 'pom.xml'),
    ...readdirSync(runner).sort().map((file) => join(runner, file)),
    ...readdirSync(scenario.folder)
      .filter((file) => file.endsWith('.java') || file === 'input.csv' || file === QUERY_FILE)
      .sort()
      .map((file) => join(scenario.folder, file)),
  ];
  for (const file of files) hash.update(file.slice(CONFORMANCE_DIR.length)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export interface ExpectedOutput {
  /** The hash of the inputs Flink ran on; stale when it differs from {@link inputsHash}. */
  readonly hash: string | undefined;
  readonly lines: string[];
}

export function expectedOutput(scenario: Scenario): ExpectedOutput {
  const file = join(scenario.folder, EXPECTED_FILE);
  if (!existsSync(file)) return { hash: undefined, lines: [] };
  const [header = '', ...lines] = readFileSync(file, 'utf8').split('\n');
  return { hash: /inputs sha256 ([0-9a-f]{64})/.exec(header)?.[1], lines: lines.filter((l) => l !== '') };
}

export function expectedFileText(hash: string, lines: readonly string[]): string {
  return `# Apache Flink 2.2's output (npm run conformance writes it), inputs sha256 ${hash}\n${lines.map((l) => `${l}\n`).join('')}`;
}
