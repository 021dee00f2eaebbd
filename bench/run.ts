// `npm run bench [-- --quick] [--records N] [--partitions N] [--late-fraction F] [--only PHASES] [--state-sizes N,N,...]`:
// Sluice beside hand-written kafkajs pipelines and Apache Flink, on the same broker and the
// same orders, in one run. Phases: throughput over pre-loaded orders, end-to-end latency over
// paced orders, the scaling curves, and a cost model. Each contender runs in a process of its
// own under /usr/bin/time; each one's output is checked against the expected 5-minute sums.
// Writes bench/results/report.md and its SVG charts. Never part of npm test.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { acquireSchemaRegistry } from '../lib/offline/schema-registry.js';
import { formatFormatFigures, measureFormats } from './formats.js';
import { STATE_MERGE_FAN_IN } from '../lib/snapshot/checkpoint-state.js';
import { barChart, lineChart } from './charts.js';
import type { ContenderConfig } from './contenders/config.js';
import { buildFlinkJob, contender, contenders, FLINK_EO, RAW, SLUICE_EO, SLUICE_EO_PER_BATCH, type Contender } from './contenders/registry.js';
import { costModel, formatCostModel, formatIdleCost, SEED_DEPLOYMENT_IDLE } from '../lib/cost/model.js';
import { latencyGoalWindow } from '../lib/plan/batching.js';
import { formatHandlerAgainstFlink, formatHandlerRows, measureHandlers, type HandlerRow } from './handler.js';
import { formatColdStart, measureColdStart } from './cold-start.js';
import { DEPLOYED_MEMORY_MB } from './critical-path.js';
import { measureLatency, WALL_MS_PER_WINDOW, type LatencyFigures, type PacedInputOptions } from './latency.js';
import { measureThroughput, type Measured } from './measure.js';
import { recentNexmark } from './nexmark/generator.js';
import { NEXMARK_QUERIES } from './nexmark/queries.js';
import { formatNexmark, runNexmark } from './nexmark/run.js';
import { benchTopic, expectedSums, loadOrders, ORDER_SHAPE, type OrderOptions } from './orders.js';
import { mean, measureStateSize, median, type CurvePoint } from './scaling.js';
import { formatWriteUnits, measureWriteUnits } from './write-units.js';
import type { StateSizeResult } from './state-size.js';

const PHASES = ['handler', 'throughput', 'latency', 'scaling', 'nexmark'] as const;
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    records: { type: 'string' },
    partitions: { type: 'string', default: '4' },
    'late-fraction': { type: 'string', default: '0' },
    only: { type: 'string', default: PHASES.join(',') },
    'state-sizes': { type: 'string' },
  },
});
const quick = args.quick;
const records = Number(args.records ?? (quick ? 60_000 : 1_000_000));
const partitions = Number(args.partitions);
const phases = new Set(args.only.split(','));
for (const phase of phases) {
  if (!(PHASES as readonly string[]).includes(phase)) throw new Error(`--only ${phase}: the phases are ${PHASES.join(', ')}`);
}
const CHECKPOINT_MS = 5_000;
const BATCH = 1_000;
/** The cost model's deployment: the template's batching window (lib/cli/deploy.ts), and the seed pipeline's checkpoint interval. */
const COST_BATCHING_WINDOW_S = 1;
const DEPLOYED_CHECKPOINT_INTERVAL_S = 60;
/** The cost model's second table: checkpoint-gated output waits for the interval anyway, and a goal a quarter above it lets batches grow. */
const COST_LATENCY_GOAL_S = 75;
const LATENCY: Omit<PacedInputOptions, 'partitions'> & { warmupMs: number } = quick
  ? { rate: 1_000, seconds: 15, warmupMs: 3_000 }
  : { rate: 1_000, seconds: 60, warmupMs: 10_000 };
const CURVE_RECORDS = quick ? 20_000 : 100_000;
const BATCH_SIZES = [100, 300, 1_000, 3_000, 10_000];
const PARTITION_COUNTS = [1, 2, 4, 8, 16];
const STATE_SIZES = args['state-sizes']?.split(',').map(Number) ?? (quick ? [1_000, 10_000, 30_000] : [1_000, 10_000, 100_000, 1_000_000]);
if (STATE_SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--state-sizes ${args['state-sizes']}: give whole numbers of keys, comma-separated`);
const CHANGED_KEYS = 1_000;
// Enough for the full run to reach, at every size, a merge that reads a shard's whole state:
// the seed leaves objects of level 1 at most, and FAN_IN × (FAN_IN - 1) checkpoints add the
// level-1 objects that make a level-1 merge.
const FULL_STATE_CHECKPOINTS = STATE_MERGE_FAN_IN * (STATE_MERGE_FAN_IN - 1) + 4;
const STATE_CHECKPOINTS = quick ? 5 : FULL_STATE_CHECKPOINTS;

const say = (line: string) => process.stdout.write(`${line}\n`);
buildFlinkJob(say);

// No late orders by default: Flink's watermark is the minimum over all partitions, Sluice's and the
// kafkajs pipeline's are per partition, so the three would drop different late orders.
const orders = (count: number): OrderOptions => ({ ...ORDER_SHAPE, count, lateFraction: Number(args['late-fraction']) });

const { brokers, release } = await acquireBrokers({});
const admin = new KafkaAdmin({ brokers });
const run = Date.now().toString(36);
let topics = 0;

/** A fresh topic of `topicPartitions` partitions holding `options`' orders and the closing ones. */
async function loadInput(options: OrderOptions, topicPartitions: number): Promise<string> {
  const topic = `bench-orders-${run}-${topics++}`;
  await admin.ensureTopics([benchTopic(topic, topicPartitions)]);
  say(`Loading ${options.count.toLocaleString('en')} orders into ${topic} (${topicPartitions} partitions)...`);
  await loadOrders({ brokers }, topic, topicPartitions, options);
  return topic;
}

/** Runs a contender over a pre-loaded topic into a fresh output topic. */
async function throughputRun(
  entrant: Contender,
  input: string,
  options: OrderOptions,
  topicPartitions: number,
  batchSize: number,
): Promise<Measured> {
  const output = `bench-out-${run}-${topics++}`;
  await admin.ensureTopics([benchTopic(output, topicPartitions)]);
  const expected = expectedSums(options);
  const config: ContenderConfig = {
    brokers,
    input,
    output,
    partitions: topicPartitions,
    records: options.count + topicPartitions,
    expectedWindows: expected.size,
    guarantee: entrant.guarantee,
    ...(entrant.outputCommit ? { outputCommit: entrant.outputCommit } : {}),
    checkpointIntervalMs: CHECKPOINT_MS,
    batchSize,
    paced: false,
  };
  const measured = await measureThroughput(entrant, config, expected);
  await admin.deleteTopics([output]).catch(() => undefined);
  return measured;
}

const perCore = (m: Measured, inputRecords: number) => inputRecords / Math.max(m.cpuS, 0.001);
const sections: string[] = [];
const charts = new Map<string, string>();
const phaseMinutes: string[] = [];
let phaseStarted = Date.now();
function phaseDone(phase: string): void {
  phaseMinutes.push(`${phase} ${((Date.now() - phaseStarted) / 60_000).toFixed(1)} min`);
  say(`-- ${phaseMinutes.at(-1) ?? ''}`);
  writeReport();
  phaseStarted = Date.now();
}
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

/** Writes the report of the phases done so far: a later phase that fails leaves the earlier ones' figures. */
function writeReport(): void {
  const report = `# Sluice benchmark

Run ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), one local Kafka broker.
Orders of ${ORDER_SHAPE.recordBytes} bytes (${ORDER_SHAPE.categories} categories, ${partitions} partitions, out-of-orderness
${ORDER_SHAPE.outOfOrdernessMs} ms, late fraction ${args['late-fraction']}); every contender computes the 5-minute category sums
(the raw one copies records). Checkpoints every ${CHECKPOINT_MS} ms, batches of ${BATCH}.
Command: \`${command}\` (${phaseMinutes.join(', ')}). Where Sluice's time goes per record: \`npm run bench:profile\` (profile.md).

${sections.join('\n\n')}
`;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/report.md', report);
  for (const [file, svg] of charts) writeFileSync(`bench/results/${file}`, svg);
}

// ---- The handler alone ------------------------------------------------------------------------
/** The handler's figures at the throughput run's batch size: the cost model bills its modelled duration. */
let handlerAtBatch: HandlerRow | undefined;
let handlerRows: HandlerRow[] = [];
/** What a cold start adds to a warm batch of BATCH, billed ms at the deployed memory size. */
let initBilledMs: number | undefined;
if (phases.has('handler')) {
  const runs = 3;
  say('The processor handler alone, against the hand-written floor:');
  handlerRows = await measureHandlers({ brokers, runs, batches: [100, 1_000, 10_000], guarantees: ['EXACTLY_ONCE'], say });
  handlerAtBatch = handlerRows.find((row) => row.batch === BATCH);
  sections.push(`## The processor handler alone\n\n${formatHandlerRows(handlerRows, runs)}\n\nThe same alone: \`npm run bench:handler\`.`);
  say('A cold start of the packaged processor:');
  const coldStart = await measureColdStart({ brokers, runs, say });
  const warmBatchMs = handlerAtBatch?.modelled.sluice.billedMs[DEPLOYED_MEMORY_MB];
  const coldBatchMs = coldStart.billedMs[DEPLOYED_MEMORY_MB];
  if (warmBatchMs !== undefined && coldBatchMs !== undefined) initBilledMs = Math.max(0, Math.round(coldBatchMs - warmBatchMs));
  sections.push(`### A cold start\n\n${formatColdStart(coldStart)}\n\nThe same alone: \`npm run bench:cold-start\`.`);
  say('The handler in Avro through the schema registry, beside JSON:');
  const registry = await acquireSchemaRegistry();
  try {
    const figures = await measureFormats({ brokers, registry: registry.url, runs, say });
    sections.push(`### Avro through a schema registry\n\n${formatFormatFigures(figures, runs)}\n\nThe same alone: \`npm run bench:formats\`.`);
  } finally {
    await registry.release();
  }
  say('DynamoDB write units per record:');
  const writeUnits = await measureWriteUnits(5);
  const dense = writeUnits.find((row) => row.distinctKeys === 10_000 && row.keyspace === 10_000);
  sections.push(
    `### DynamoDB write units\n\n${formatWriteUnits(writeUnits)}\n\n` +
      `Keys share items in packs (docs/PROTOCOL.md, "Key packs"): a batch pays a unit per kilobyte of the packs it changed. ` +
      `\`write units per record, 10,000 distinct keys per batch: ${dense?.unitsPerRecord.toFixed(4) ?? 'n/a'}\`. The same alone: \`npm run bench:write-units\`.`,
  );
  phaseDone('handler');
}

// ---- Throughput ----------------------------------------------------------------------------
const throughput = new Map<string, Measured>();
const inputRecords = records + partitions;
if (phases.has('throughput')) {
  const options = orders(records);
  const input = await loadInput(options, partitions);
  for (const entrant of contenders) {
    process.stdout.write(`${entrant.name}... `);
    const measured = await throughputRun(entrant, input, options, partitions, BATCH);
    throughput.set(entrant.name, measured);
    say(`${(inputRecords / measured.wallS).toFixed(0)} records/s, ${measured.check}`);
  }
  await admin.deleteTopics([input]).catch(() => undefined);

  const ratio = (m: Measured, base: Measured | undefined) => (base ? (perCore(m, inputRecords) / perCore(base, inputRecords)).toFixed(2) : 'n/a');
  const eoOverhead = (system: 'Sluice' | 'Flink') => {
    const eo = throughput.get(`${system} EXACTLY_ONCE`);
    return eo ? ratio(eo, throughput.get(`${system} AT_LEAST_ONCE`)) : 'n/a';
  };
  /** Per-batch output commit's CPU beside checkpoint-gated: the same input, so CPU seconds compare as CPU per record. */
  const perBatchCpuLine = () => {
    const [perBatch, gated] = [throughput.get(SLUICE_EO_PER_BATCH), throughput.get(SLUICE_EO)];
    return perBatch && gated ? `CPU per record, Sluice EXACTLY_ONCE per batch ÷ at checkpoints: ${(perBatch.cpuS / gated.cpuS).toFixed(2)}` : '';
  };
  const rows = [...throughput].map(
    ([name, m]) =>
      `| ${name} | ${(inputRecords / m.wallS).toFixed(0)} | ${m.cpuS.toFixed(1)} | ${perCore(m, inputRecords).toFixed(0)} | ` +
      `${ratio(m, throughput.get(RAW))} | ${ratio(m, throughput.get(FLINK_EO))} | ${m.peakMb.toFixed(0)} | ${m.check} |`,
  );
  const requests = throughput.get(SLUICE_EO)?.result?.requests ?? {};
  const per1000 = (prefix: string) =>
    ((Object.entries(requests).reduce((n, [op, c]) => (op.startsWith(prefix) ? n + c : n), 0) / inputRecords) * 1000).toFixed(2);
  const checkpoints = throughput.get(SLUICE_EO)?.result?.checkpoints ?? 0;
  const perCheckpoint = checkpoints > 0 ? ((requests['S3.PutObject'] ?? 0) / checkpoints).toFixed(1) : 'n/a';
  sections.push(`## Throughput

${inputRecords.toLocaleString('en')} pre-loaded orders. Records/s is input over wall time from start (Flink's and
Sluice's include their start-up); per core is input over the CPU seconds the contender's
process used (the broker's are not counted, and the same for all). Ratios compare records/s
per core. Peak MB is the process's peak resident memory.

| contender | records/s | CPU s | records/s per core | ÷ kafkajs raw | ÷ Flink EO | peak MB | output |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

**Exactly-once overhead** (records/s per core, EXACTLY_ONCE ÷ AT_LEAST_ONCE): Sluice ${eoOverhead('Sluice')},
Flink ${eoOverhead('Flink')}.

${perBatchCpuLine()}

Sluice EXACTLY_ONCE, AWS requests: DynamoDB ${per1000('DynamoDB.')} and S3 ${per1000('S3.')} per 1,000 records;
${checkpoints} checkpoints, and ${perCheckpoint} S3 PUTs a checkpoint over the run — almost all of them the invocations' state
deltas; what a checkpoint itself requests is in the state-size table below. All requests: \`${JSON.stringify(requests)}\`.

Sluice runs here with dynalite and s3rver embedded in its process, so its CPU includes the
emulators' work; on AWS that work is DynamoDB's and S3's.

![records/s per core](throughput.svg)`);
  const flinkEo = throughput.get(FLINK_EO);
  if (flinkEo && handlerRows.length > 0 && initBilledMs !== undefined) {
    const inputs = {
      memoryMb: DEPLOYED_MEMORY_MB,
      batches: handlerRows.map((row) => ({ batchSize: row.batch, billedMs: row.modelled.sluice.billedMs[DEPLOYED_MEMORY_MB] ?? 0, requests: row.requestsPerBatch })),
      shards: partitions,
      recordBytes: ORDER_SHAPE.recordBytes,
      batchingWindowS: COST_BATCHING_WINDOW_S,
      checkpointIntervalS: DEPLOYED_CHECKPOINT_INTERVAL_S,
      initBilledMs,
      coldStartsPerShardHour: 1,
      flinkRecordsPerCpuSecond: perCore(flinkEo, inputRecords),
    };
    const flinkNote = quick
      ? `over --quick's ${records.toLocaleString('en')} orders, start-up and warm-up included: not its steady state, so the KPUs are too many; the full run's 1,000,000 come closer`
      : `over ${records.toLocaleString('en')} orders, start-up and warm-up included`;
    sections.push(formatCostModel(costModel(inputs), inputs, flinkNote));
    // The same deployment with a latency goal a quarter above the checkpoint interval, where checkpoint-gated output becomes visible anyway.
    const goal = COST_LATENCY_GOAL_S;
    const goalWindow = latencyGoalWindow({ stages: 1, checkpointGatedIntervalSeconds: DEPLOYED_CHECKPOINT_INTERVAL_S }, goal);
    const withGoal = { ...inputs, batchingWindowS: goalWindow, latencyGoalS: goal };
    sections.push(formatCostModel(costModel(withGoal), withGoal, flinkNote));
  } else sections.push("## Cost model\n\nNot made: it needs the handler phase (batches' billed durations and requests, the cold start) and the throughput phase (Flink's CPU).");
  if (flinkEo && handlerRows.length > 0) {
    sections.push(`## The handler beside Flink\n\n${formatHandlerAgainstFlink(handlerRows, perCore(flinkEo, inputRecords))}`);
  }
  sections.push(formatIdleCost(SEED_DEPLOYMENT_IDLE));
  charts.set(
    'throughput.svg',
    barChart(
      'Records per second per CPU core (same machine, broker and input)',
      [...throughput].map(([label, m]) => ({ label, value: perCore(m, inputRecords) })),
    ),
  );
  phaseDone('throughput');
}

// ---- Latency -------------------------------------------------------------------------------
if (phases.has('latency')) {
  const paced: PacedInputOptions = { rate: LATENCY.rate, seconds: LATENCY.seconds, partitions };
  const latency = new Map<string, LatencyFigures & { check: string }>();
  for (const entrant of contenders) {
    process.stdout.write(`${entrant.name}, paced... `);
    const figures = await measureLatency(
      entrant,
      {
        brokers,
        guarantee: entrant.guarantee,
        ...(entrant.outputCommit ? { outputCommit: entrant.outputCommit } : {}),
        checkpointIntervalMs: CHECKPOINT_MS,
        batchSize: BATCH,
        topicSuffix: `${run}-${topics++}`,
      },
      paced,
      LATENCY.warmupMs,
    );
    latency.set(entrant.name, figures);
    say(`p50 ${figures.p50} ms, p99 ${figures.p99} ms, ${figures.check}`);
  }
  const rows = [...latency].map(([name, f]) => `| ${name} | ${f.p50} | ${f.p99} | ${f.max} | ${f.samples} | ${f.check} |`);
  const [perBatch, atLeastOnce] = [latency.get(SLUICE_EO_PER_BATCH), latency.get('Sluice AT_LEAST_ONCE')];
  const [gated, flinkGated] = [latency.get(SLUICE_EO), latency.get(FLINK_EO)];
  const latencyLines = [
    perBatch && atLeastOnce ? `Sluice EXACTLY_ONCE per batch p99 − Sluice AT_LEAST_ONCE p99: ${perBatch.p99 - atLeastOnce.p99} ms` : undefined,
    gated && flinkGated ? `Sluice EXACTLY_ONCE p50 − Flink EXACTLY_ONCE p50, checkpoints every ${CHECKPOINT_MS / 1_000} s: ${gated.p50 - flinkGated.p50} ms` : undefined,
  ]
    .filter((line) => line !== undefined)
    .map((line) => `\n\n${line}`)
    .join('');
  sections.push(`## End-to-end latency

${(LATENCY.rate * LATENCY.seconds).toLocaleString('en')} orders produced at ${LATENCY.rate.toLocaleString('en')} a second while each contender runs (event time moves
one 5-minute window per ${WALL_MS_PER_WINDOW / 1_000} wall seconds, so 20 window sums become due that often, at every phase
of the checkpoint cycle in turn). A window
sum's latency runs from the moment it could be emitted — when every partition has been sent an
order 10 s of event time (the out-of-orderness bound) past the window's end — to the moment a
read_committed reader polling every 10 ms first sees it; a copied record's (kafkajs raw), from
its own send. Outputs whose input was sent in the first ${LATENCY.warmupMs / 1_000} s are left out (warm-up).
Checkpoints every ${CHECKPOINT_MS / 1_000} s: an exactly-once sink's output becomes visible when the checkpoint that
covers it commits, so its latency follows the checkpoint interval — except Sluice's with
\`OutputCommit.PER_BATCH\`, where each invocation commits its own transaction once its state is durable.

| contender | p50 ms | p99 ms | max ms | samples | output |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}${latencyLines}

![p99 latency](latency.svg)`);
  charts.set('latency.svg', barChart('End-to-end latency p99 (ms), paced input', [...latency].map(([label, f]) => ({ label, value: f.p99 })), ' ms'));
  phaseDone('latency');
}

// ---- Scaling -------------------------------------------------------------------------------
if (phases.has('scaling')) {
  const sluice = contender(SLUICE_EO);
  const curveOrders = orders(CURVE_RECORDS);
  const point = (x: number, m: Measured, total: number): CurvePoint => ({
    x,
    recordsPerCore: perCore(m, total),
    recordsPerSecond: total / m.wallS,
    check: m.check,
  });
  const curveRows = (points: readonly CurvePoint[]) =>
    points.map((p) => `| ${p.x.toLocaleString('en')} | ${p.recordsPerSecond.toFixed(0)} | ${p.recordsPerCore.toFixed(0)} | ${p.check} |`).join('\n');

  const batchInput = await loadInput(curveOrders, partitions);
  const byBatch: CurvePoint[] = [];
  for (const batchSize of BATCH_SIZES) {
    process.stdout.write(`${SLUICE_EO}, batches of ${batchSize}... `);
    const measured = await throughputRun(sluice, batchInput, curveOrders, partitions, batchSize);
    byBatch.push(point(batchSize, measured, CURVE_RECORDS + partitions));
    say(`${byBatch.at(-1)?.recordsPerCore.toFixed(0)} records/s per core, ${measured.check}`);
  }
  await admin.deleteTopics([batchInput]).catch(() => undefined);

  const byPartitions: CurvePoint[] = [];
  for (const count of PARTITION_COUNTS) {
    const input = await loadInput(curveOrders, count);
    process.stdout.write(`${SLUICE_EO}, ${count} partitions... `);
    const measured = await throughputRun(sluice, input, curveOrders, count, BATCH);
    byPartitions.push(point(count, measured, CURVE_RECORDS + count));
    say(`${byPartitions.at(-1)?.recordsPerSecond.toFixed(0)} records/s, ${measured.check}`);
    await admin.deleteTopics([input]).catch(() => undefined);
  }

  const byState: StateSizeResult[] = [];
  for (const keys of STATE_SIZES) {
    process.stdout.write(`${SLUICE_EO}, state of ${keys.toLocaleString('en')} keys... `);
    const result = await measureStateSize({ brokers, keys, changed: CHANGED_KEYS, checkpoints: STATE_CHECKPOINTS, topicSuffix: `${run}-${topics++}` });
    byState.push(result);
    say(`checkpoint median ${median(result.checkpointMs)} ms (seeded in ${result.seedS.toFixed(0)} s)`);
  }
  const [smallest, largest] = [byState[0], byState.at(-1)];
  const ratioOf = (figure: (ms: readonly number[]) => number) =>
    smallest && largest ? (figure(largest.checkpointMs) / figure(smallest.checkpointMs)).toFixed(2) : 'n/a';
  const slowest = (r: StateSizeResult) => r.checkpointMs.indexOf(Math.max(...r.checkpointMs)) + 1;
  const stateRows = byState
    .map(
      (r) =>
        `| ${r.keys.toLocaleString('en')} | ${r.seedS.toFixed(1)} | ${median(r.checkpointMs)} | ${mean(r.checkpointMs).toFixed(0)} | ` +
        `${Math.max(...r.checkpointMs)} (#${slowest(r)}) | ${r.wholeStateMerges.map((n) => `#${n}: ${r.checkpointMs[n - 1]} ms`).join(', ') || 'none'} | ` +
        `${median(r.batchMs)} | ` +
        `${Object.entries(r.requestsPerCheckpoint)
          .filter(([, n]) => n > 0)
          .map(([op, n]) => `${op} ${n.toFixed(1)}`)
          .join(', ')} |`,
    )
    .join('\n');
  sections.push(`## Scaling (Sluice EXACTLY_ONCE)

### Throughput against batch size

${CURVE_RECORDS.toLocaleString('en')} pre-loaded orders, ${partitions} partitions; the batch size is the event source mapping's
(at most that many records per partition per invocation).

| batch size | records/s | records/s per core | output |
| --- | --- | --- | --- |
${curveRows(byBatch)}

![throughput against batch size](batch-size.svg)

### Throughput against partitions

The same orders over 1 … 16 partitions (one shard, one transactional producer, per partition),
batches of ${BATCH.toLocaleString('en')}. All shards run in one process on ${cpus().length} cores here; on AWS each is a Lambda
invocation of its own, so records/s per core is the figure that carries over.

| partitions | records/s | records/s per core | output |
| --- | --- | --- | --- |
${curveRows(byPartitions)}

![throughput against partitions](partitions.svg)

### Checkpoint duration against total state size

A running sum per customer (keyed state, EXACTLY_ONCE sink, 4 shards) over ${STATE_SIZES.map((n) => n.toLocaleString('en')).join(', ')}
customers; then ${STATE_CHECKPOINTS} rounds, each changing ${CHANGED_KEYS.toLocaleString('en')} random customers and taking a checkpoint, the
handlers driven back to back (no scheduling waits), timed from trigger to commit. Seeding
writes every key once through the processor (DynamoDB emulated on a thread of its own), with
a checkpoint after every 200,000 keys.

| keys | seed s | checkpoint median ms | mean ms | max ms (checkpoint #) | merges of a shard's whole state | batch of ${CHANGED_KEYS.toLocaleString('en')} changes, median ms | requests per checkpoint |
| --- | --- | --- | --- | --- | --- | --- | --- |
${stateRows}

**Checkpoint duration at ${(largest?.keys ?? 0).toLocaleString('en')} keys ÷ at ${(smallest?.keys ?? 0).toLocaleString('en')} keys: ${ratioOf(median)}** (medians;
means ${ratioOf(mean)}) — a checkpoint costs what changed: one record read per shard, a
manifest read and write, and every ${STATE_MERGE_FAN_IN}th checkpoint a merge of recent state objects
(docs/PROTOCOL.md, "S3 snapshots"). A merge that reads a shard's whole state (after it, the
shard's state is one object) costs in proportion to the state, and comes once every ${STATE_MERGE_FAN_IN}^L checkpoints
as the state's objects reach level L: the means spread it${
    quick ? `; the ${STATE_CHECKPOINTS} checkpoints of --quick may reach none, the full run's ${FULL_STATE_CHECKPOINTS} reach one at every size` : ''
  }.

![checkpoint duration against state size](state-size.svg)`);
  charts.set(
    'batch-size.svg',
    lineChart('Sluice EXACTLY_ONCE: records/s per core against batch size', 'batch size (records)', 'records/s per core', [
      { name: 'records/s per core', points: byBatch.map((p) => [p.x, p.recordsPerCore] as const) },
    ]),
  );
  charts.set(
    'partitions.svg',
    lineChart('Sluice EXACTLY_ONCE: throughput against partitions', 'partitions', 'records/s', [
      { name: 'records/s', points: byPartitions.map((p) => [p.x, p.recordsPerSecond] as const) },
      { name: 'records/s per core', points: byPartitions.map((p) => [p.x, p.recordsPerCore] as const) },
    ]),
  );
  charts.set(
    'state-size.svg',
    lineChart('Checkpoint duration against total state size', 'keys in state', 'ms', [
      { name: 'median', points: byState.map((r) => [r.keys, median(r.checkpointMs)] as const) },
      { name: 'mean', points: byState.map((r) => [r.keys, mean(r.checkpointMs)] as const) },
    ]),
  );
  phaseDone('scaling');
}

// ---- Nexmark ------------------------------------------------------------------------------------
if (phases.has('nexmark')) {
  say('Nexmark on Sluice and on Flink, the same events:');
  const figures = await runNexmark({ brokers, events: records, queries: NEXMARK_QUERIES, batch: BATCH, generator: recentNexmark(), say });
  sections.push(`## Nexmark\n\n${formatNexmark(figures, records, BATCH)}\n\nThe same alone: \`npm run nexmark -- --events ${records}\`.`);
  phaseDone('nexmark');
}

await admin.close();
await release();

say(`\n${readFileSync('bench/results/report.md', 'utf8')}\nWritten to bench/results/report.md and ${[...charts.keys()].join(', ')}`);
