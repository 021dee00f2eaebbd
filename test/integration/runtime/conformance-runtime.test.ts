// A subset of the conformance scenarios through the whole serverless runtime rather than the
// harness: the input in a topic of the real broker, the processor, coordinator and commit
// functions driven as Lambda would, state in dynalite and S3, and EXACTLY_ONCE output read back
// read_committed. The scenario's watermark lines travel as marker records that a watermark
// generator turns into watermarks, emitted after every record, so that the output must equal
// Flink's kept output record for record, however the records are batched. SQL scenarios go
// through the SQL planner onto the same runtime, and compare as sets, as in the suite.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  JsonDeserializationSchema,
  KafkaSource,
  seconds,
  StreamExecutionEnvironment,
  WatermarkEmission,
  type DataStream,
} from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { planTopics } from '../../../lib/plan/topics.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import type { Event } from '../../conformance/event.js';
import { comparable, expectedOutput, line, markerWatermarks, parseInput, queryPipeline, scenarios, type Marked } from '../../conformance/scenarios.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { exactlyOnceLines } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();

/**
 * No keyBy, or a first keyBy by the event's key, which the input's record keys follow (one
 * stage); or windowAll's, a join's or a broadcast connection's repartition (two), in scenarios
 * whose output does not depend on where the watermark falls among the records: a later stage
 * takes its watermark at checkpoints.
 */
const ON_THE_RUNTIME = [
  'tumbling-reduce',
  'tumbling-allowed-lateness',
  'session-late-merge',
  'sliding-sum',
  'keyed-timers',
  'keyed-timer-delete',
  'rolling-sum',
  'maxby-ties',
  'count-window',
  'session-count-trigger',
  'evict-after-count',
  'early-firing-trigger',
  'count-window-all',
  'session-window-all',
  'connect-comap',
  'window-join',
  'window-cogroup',
  'broadcast-rules',
  // Queries with no key or keyed by k, the events' record key: planned by Sluice's SQL planner.
  'sql-projection',
  'sql-string-functions',
  'sql-decimal-arithmetic',
  'sql-nulls',
  'sql-tumble-aggregate',
  'sql-tumble-late',
  'sql-hop-aggregate',
  'sql-cumulate-aggregate',
  'sql-session-aggregate',
  'sql-window-distinct-filter',
  'sql-window-having',
  'sql-window-decimal',
  'sql-window-where',
  'sql-aggregate-nulls',
  'sql-tumble-rows',
  'sql-union-all',
  'sql-group-aggregate',
  'sql-group-having',
  'sql-group-projection',
  'sql-join-inner',
  'sql-join-left',
  'sql-join-comma',
  'sql-join-aggregate',
  'sql-join-expression-keys',
  'sql-top-n',
  'sql-top-n-without-rank',
  'sql-top-n-global',
  'sql-dedup-first-late',
  'sql-dedup-last',
  // Retractions across a repartition topic: the second GROUP BY takes back what the first updates.
  'sql-group-over-updates',
  'sql-group-retract-extremes',
  'sql-join-left-updating',
];
/** Scenarios keyed by another key than the event's, whose source is therefore not partitioned by the record key. */
const REKEYED = ['window-join', 'window-cogroup', 'sql-join-expression-keys', 'sql-top-n-global'];
/** Flink's end of input, as a watermark. */
const END_OF_INPUT = Number.MAX_SAFE_INTEGER;

function pipelineOf(name: string, build: (events: DataStream<Event>) => DataStream<string>, partitionedByRecordKey: boolean) {
  const env = StreamExecutionEnvironment.create({ name }).setWatermarkEmission(WatermarkEmission.everyRecords(1));
  env.enableCheckpointing(seconds(10));
  const lines = env.fromSource(
    KafkaSource.builder<Marked>()
      .setBootstrapServers(testBrokers())
      .setTopics(`${name}-input`)
      .setGroupId(name)
      .setValueOnlyDeserializer(new JsonDeserializationSchema<Marked>())
      .setPartitionedByRecordKey(partitionedByRecordKey)
      .build(),
    markerWatermarks,
    'input',
  );
  const events = lines.flatMap((line) => ('key' in line ? [line] : []));
  build(events).sinkTo(exactlyOnceLines(name, testBrokers()));
  return env;
}

describe('conformance scenarios on the serverless runtime', () => {
  it.each(scenarios().filter((s) => ON_THE_RUNTIME.includes(s.name)).map((s) => [s.name, s] as const))('%s matches Flink', async (_, scenario) => {
    const name = uniqueName(`conf-${scenario.name}`);
    // The records keep event times of 1970, and a global window's results the end of time:
    // topics that keep records whatever their age, and take any time.
    const forever = { 'retention.ms': '-1', 'message.timestamp.after.max.ms': '9223372036854775807' };
    await environment().admin.ensureTopics([
      { topic: `${name}-input`, partitions: 1, configs: forever },
      { topic: `${name}-out`, partitions: 1, configs: forever },
    ]);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      [...parseInput(scenario), { watermark: END_OF_INPUT, partition: 0 }].map((line) => {
        if ('watermark' in line) return { topic: `${name}-input`, key: null, value: JSON.stringify({ watermark: line.watermark }) };
        if ('event' in line) return { topic: `${name}-input`, key: line.event.key, value: JSON.stringify(line.event) };
        throw new Error(`${scenario.name} is fed here in event time through one partition`);
      }),
    );
    await writer.close();
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    const build = scenario.sql
      ? queryPipeline(readFileSync(join(scenario.folder, 'query.sql'), 'utf8'))
      : ((await import(`${scenario.folder}/sluice.ts`)) as { default: (events: DataStream<Event>) => DataStream<string> }).default;
    const clock = { now: Date.now() };
    const runtime = new PipelineRuntime(
      pipelineOf(name, build, !REKEYED.includes(scenario.name)),
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => clock.now },
    );
    await environment().admin.ensureTopics(planTopics(runtime.plan).repartitions.map(({ topic, partitions }) => ({ topic, partitions })));
    const driver = new LambdaDriver(runtime, clock);
    try {
      // Batches of 3: state, timers and watermarks cross invocations. A later stage reads what
      // an earlier one committed, and takes its watermark from a checkpoint.
      for (let stage = 0; stage < runtime.plan.stages.length; stage++) {
        await driver.drain(3);
        await driver.checkpoint();
      }
      await driver.checkpoint();
    } finally {
      await driver.close();
      await runtime.close();
    }
    const expected = expectedOutput(scenario).lines;
    expect(expected.length, "Flink wrote something").toBeGreaterThan(0);
    // The changes that leave a final table may be fewer than Flink's, which are ordered otherwise.
    const output = await consumeAll(`${name}-out`, { expected: scenario.finalTable ? comparable(scenario, expected).length : expected.length });
    // A query's lines are its changes alone, without the record timestamps a DataStream scenario prints.
    const lines = output.map((record) => (scenario.sql ? (record.value ?? '') : line(record.timestamp, record.value ?? '')));
    expect(comparable(scenario, lines)).toEqual(comparable(scenario, expected));
  }, 120_000);
});
