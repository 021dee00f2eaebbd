// The processor handler alone, against a hand-written floor (bench/contenders/kafkajs-floor-handler.ts): each is
// called in a loop with MSK events built beforehand, one partition of the bench orders, while
// DynamoDB and S3 are emulated in another process (bench/emulator-host.ts) and Kafka is the
// local broker. Each run is a process of its own (bench/handler-run.ts), which first warms up
// until its figures settle; what is measured is that process's CPU inside the handler calls, and
// apart, the CPU of the coordinator and commit function run between them (CHECKPOINT_RECORDS).
// `npm run bench:handler [-- --runs 3] [--batches 100,1000,10000] [--guarantees EXACTLY_ONCE] [--cpu-prof DIR]`
// prints the table alone; `npm run bench` puts it first in its report.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { MSKEvent } from 'aws-lambda';
import { createDocumentClient, createS3Client, type AwsClientOptions } from '../lib/aws/clients.js';
import { processorHandler } from '../lib/aws/handlers.js';
import { PipelineRuntime } from '../lib/aws/runtime.js';
import { RequestCounter } from '../lib/aws/request-metrics.js';
import { CommittedRangeReader, KafkaAdmin, type KafkaRecord } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { mskEvent } from '../lib/offline/msk-event.js';
import { ensureBucket } from '../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../lib/state/dynamodb-shard-store.js';
import { ItemShardStore } from '../lib/state/shard-store.js';
import { WRITE_UNITS } from '../lib/cost/model.js';
import { LambdaDriver } from '../lib/testing/lambda-driver.js';
import { parseResult } from './child-io.js';
import { ASSUMED_LATENCY_MS, criticalPath, MODELLED_MEMORY_MB, modelledBilledMs, SERVICES, SpanLog, type Service } from './critical-path.js';
import { startFloorHandler } from './contenders/kafkajs-floor-handler.js';
import { benchTopic, ORDER_SHAPE, orderAt, serializeOrder, type BenchOrder } from './orders.js';
import type { StreamExecutionEnvironment } from '../lib/api/index.js';
import { benchPipeline, type BenchPipelineOptions } from './pipeline.js';
import { median } from './scaling.js';

export type Guarantee = BenchPipelineOptions['guarantee'];

/**
 * A checkpoint every this many records (about 5 s at the handler's speed at batch 1,000), or
 * invocations if fewer: a shard that writes a transaction and then runs through its pool of 64
 * transaction slots before a checkpoint commits it only acknowledges until one does.
 */
const CHECKPOINT_RECORDS = 10_000;
const CHECKPOINT_INVOCATIONS = 50;
const MIN_RECORDS = 100_000;
const BATCHES_PER_RUN = 30;
/** The first batches of a run open connections and warm the JIT: left out of the figures. */
const WARM_UP_FRACTION = 0.1;
/**
 * The handler table's warm-up: 400,000 records, at least 40 batches and at most 1,500 (1,500 of
 * 100, 400 of 1,000, 40 of 10,000). After 150,000 the floor at batches of 10,000 still ran its
 * last measured batches in 0.62 of the time of its first.
 */
const warmUpBatchesFor = (batch: number) => Math.min(1_500, Math.max(40, Math.ceil(400_000 / batch)));
const CLOCK_TICKS_PER_SECOND = 100;

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface HandlerRow {
  readonly guarantee: Guarantee;
  readonly batch: number;
  /** CPU of this process inside the handler, µs per record, over the runs. */
  readonly sluice: Spread;
  readonly floor: Spread;
  /** The emulators' CPU in their own process while each handler ran, µs per record (medians). */
  readonly emulatorsSluice: number;
  readonly emulatorsFloor: number;
  /** DynamoDB and S3 requests per batch, by operation (the median run's). */
  readonly requestsPerBatch: Record<string, number>;
  readonly records: number;
  /** The checkpoints' CPU (coordinator and commit function) in the handler's process, µs per record (median). */
  readonly checkpointsSluice: number;
  /** µs per record of the last third of the measured batches ÷ the first third (medians): 1 when the runs had settled. */
  readonly settled: { readonly sluice: number; readonly floor: number };
  /** Each one's critical path and modelled billed duration per batch (bench/critical-path.ts), medians over the runs. */
  readonly modelled: Readonly<Record<'sluice' | 'floor', ModelledBatch>>;
}

export interface ModelledBatch {
  /** Round trips on the critical path per batch, by service. */
  readonly roundTrips: Readonly<Record<Service, number>>;
  /** Billed milliseconds per batch, by memory size (MB). */
  readonly billedMs: Readonly<Record<number, number>>;
}

export interface HandlerBenchOptions {
  readonly brokers: readonly string[];
  readonly batches: readonly number[];
  readonly guarantees: readonly Guarantee[];
  readonly runs: number;
  readonly say: (line: string) => void;
  /** Where each run's process writes a V8 CPU profile (`node --cpu-prof`), when given. */
  readonly cpuProfileDir?: string;
}

export interface RunFigures {
  readonly cpuMicros: number;
  readonly records: number;
  readonly emulatorTicks: number;
  /** DynamoDB and S3 requests per measured batch, by operation. */
  readonly requests: Record<string, number>;
  readonly batches: number;
  /** Window sums the handler wrote, committed: the two must write the same. */
  readonly windows: number;
  /** The measured batches' critical paths (bench/critical-path.ts): their waits summed, and round trips per batch. */
  readonly waitMs: number;
  readonly roundTrips: Readonly<Record<Service, number>>;
  /** CPU of the checkpoints run between the measured batches, µs. */
  readonly checkpointCpuMicros: number;
  /** µs per record of the first and the last third of the measured batches: equal once the run has settled. */
  readonly settle: { readonly first: number; readonly last: number };
}

/** What one run in a process of its own needs (bench/handler-run.ts). */
export interface RunRequest {
  readonly which: 'sluice' | 'floor';
  readonly brokers: readonly string[];
  readonly guarantee: Guarantee;
  readonly batch: number;
  readonly count: number;
  readonly warmUpBatches: number;
  readonly name: string;
  readonly input: string;
  readonly emulators: EmulatorAddress;
}

/** Where the emulators' process is, for a run in another process. */
export interface EmulatorAddress {
  readonly pid: number;
  readonly dynamo: AwsClientOptions;
  readonly s3: AwsClientOptions;
}

/** The emulators' process: its CPU, read from /proc, in clock ticks. */
export class EmulatorHost {
  private constructor(
    readonly address: EmulatorAddress,
    private readonly child?: ChildProcessByStdio<Writable, Readable, null>,
  ) {}

  get dynamo(): AwsClientOptions {
    return this.address.dynamo;
  }

  get s3(): AwsClientOptions {
    return this.address.s3;
  }

  /** The host another process started: its CPU is read, and it is left running. */
  static attach(address: EmulatorAddress): EmulatorHost {
    return new EmulatorHost(address);
  }

  static async start(): Promise<EmulatorHost> {
    const script = fileURLToPath(new URL('./emulator-host.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const options = await new Promise<{ dynamo: AwsClientOptions; s3: AwsClientOptions }>((resolve, reject) => {
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString('utf8');
        const result = parseResult(printed);
        if (result) resolve(result as { dynamo: AwsClientOptions; s3: AwsClientOptions });
      });
      child.once('exit', (code) => reject(new Error(`the emulator host exited (${code}) before it was ready`)));
    });
    if (child.pid === undefined) throw new Error('the emulator host has no process id');
    return new EmulatorHost({ pid: child.pid, ...options }, child);
  }

  cpuTicks(): number {
    const fields = readFileSync(`/proc/${this.address.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command's name.
    return Number(fields[11]) + Number(fields[12]);
  }

  async stop(): Promise<void> {
    const { child } = this;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    await exited;
  }
}

/** The bench orders on partition 0 of `topic`, as the event source mapping delivers them, `batch` a time. */
export function buildEvents(
  topic: string,
  count: number,
  batch: number,
  brokers: readonly string[],
  encode: (order: BenchOrder) => Buffer = (order) => Buffer.from(serializeOrder(order, ORDER_SHAPE.recordBytes)),
): MSKEvent[] {
  const options = { ...ORDER_SHAPE, count, lateFraction: 0 };
  const records = Array.from({ length: count }, (_, offset) => {
    const order = orderAt(offset, options);
    return { key: Buffer.from(order.category), value: encode(order), timestamp: order.timestamp };
  });
  return batchedEvents(topic, records, batch, brokers);
}

/** Records at offsets 0, 1, … of partition 0 of `topic`, as the event source mapping delivers them, `batch` a time. */
export function batchedEvents(
  topic: string,
  records: readonly { readonly key: Buffer | null; readonly value: Buffer; readonly timestamp: number }[],
  batch: number,
  brokers: readonly string[],
): MSKEvent[] {
  const events: MSKEvent[] = [];
  for (let start = 0; start < records.length; start += batch) {
    const batched: KafkaRecord[] = records.slice(start, start + batch).map(({ key, value, timestamp }, i) => ({
      topic,
      partition: 0,
      offset: start + i,
      timestamp,
      timestampType: 'CREATE_TIME',
      key,
      value,
      headers: [],
    }));
    events.push(mskEvent(batched, 'arn:aws:kafka:us-east-1:000000000000:cluster/bench/0', brokers));
  }
  return events;
}

/**
 * Calls `handle` with each event; sums this process's CPU inside the calls (warm-up left out),
 * and runs `between` every CHECKPOINT_RECORDS records, outside the count.
 */
async function measureLoop(
  events: readonly MSKEvent[],
  batch: number,
  handle: (event: MSKEvent) => Promise<unknown>,
  emulators: EmulatorHost,
  spans: SpanLog,
  {
    between,
    requests = () => ({}),
    warmUpBatches,
  }: { between?: () => Promise<unknown>; requests?: () => Readonly<Record<string, number>>; warmUpBatches?: number } = {},
): Promise<Omit<RunFigures, 'windows'>> {
  const warmUp = warmUpBatches ?? Math.max(1, Math.ceil(events.length * WARM_UP_FRACTION));
  if (warmUpBatches !== undefined && warmUp >= events.length) throw new Error(`a warm-up of ${warmUp} batches leaves none of the ${events.length} to measure`);
  const perBatchMicros: number[] = [];
  let checkpointCpuMicros = 0;
  let cpuMicros = 0;
  let emulatorTicks = 0;
  let records = 0;
  let sinceCheckpoint = 0;
  let waitMs = 0;
  const roundTrips: Record<Service, number> = { DynamoDB: 0, S3: 0, Kafka: 0 };
  const requested: Record<string, number> = {};
  for (const [index, event] of events.entries()) {
    const requestsBefore = requests();
    const ticks = emulators.cpuTicks();
    spans.drain();
    const before = process.cpuUsage();
    await handle(event);
    const used = process.cpuUsage(before);
    if (index >= warmUp) {
      cpuMicros += used.user + used.system;
      perBatchMicros.push(used.user + used.system);
      const path = criticalPath(spans.drain());
      waitMs += path.waitMs;
      for (const service of SERVICES) roundTrips[service] += path.roundTrips[service];
      emulatorTicks += emulators.cpuTicks() - ticks;
      records += batch;
      for (const [operation, n] of Object.entries(requests())) requested[operation] = (requested[operation] ?? 0) + n - (requestsBefore[operation] ?? 0);
    }
    sinceCheckpoint += batch;
    if (between && sinceCheckpoint >= Math.min(CHECKPOINT_RECORDS, CHECKPOINT_INVOCATIONS * batch)) {
      sinceCheckpoint = 0;
      const before = process.cpuUsage();
      await between();
      const used = process.cpuUsage(before);
      if (index >= warmUp) checkpointCpuMicros += used.user + used.system;
    }
  }
  const third = Math.max(1, Math.floor(perBatchMicros.length / 3));
  const perRecordOf = (micros: readonly number[]) => micros.reduce((sum, n) => sum + n, 0) / (micros.length * batch);
  const settle = { first: perRecordOf(perBatchMicros.slice(0, third)), last: perRecordOf(perBatchMicros.slice(-third)) };
  const batches = events.length - warmUp;
  const perBatch = Object.entries(requested).filter(([, n]) => n > 0).map(([operation, n]) => [operation, Math.round((n / batches) * 10) / 10]);
  const perBatchRoundTrips = Object.fromEntries(SERVICES.map((service) => [service, roundTrips[service] / batches])) as Record<Service, number>;
  return {
    cpuMicros,
    records,
    emulatorTicks,
    batches,
    requests: Object.fromEntries(perBatch) as Record<string, number>,
    waitMs,
    roundTrips: perBatchRoundTrips,
    checkpointCpuMicros,
    settle,
  };
}

export async function runSluice(
  brokers: readonly string[],
  emulators: EmulatorHost,
  guarantee: Guarantee,
  batch: number,
  events: readonly MSKEvent[],
  name: string,
  input: string,
  pipeline: (options: BenchPipelineOptions) => StreamExecutionEnvironment = benchPipeline,
  { warmUpBatches }: { warmUpBatches?: number } = {},
): Promise<RunFigures> {
  const clock = { now: Date.now() };
  const spans = new SpanLog();
  const runtime = await benchRuntime(pipeline({ brokers, input, output: `${name}-out`, guarantee, checkpointIntervalMs: 5_000 }), brokers, emulators, name, clock, spans);
  const driver = new LambdaDriver(runtime, clock);
  const [stage] = runtime.plan.stages;
  if (!stage) throw new Error('the bench pipeline has no stage');
  const handler = processorHandler(runtime, stage.id);
  const checkpoint = () => driver.checkpoint({ onTime: true });
  try {
    const invoke = (event: MSKEvent) => {
      clock.now += 500;
      return handler(event);
    };
    const figures = await measureLoop(events, batch, invoke, emulators, spans, {
      between: checkpoint,
      // Write units beside the requests: a write of the shard record or of a pack costs one per started kilobyte.
      requests: () => ({ ...runtime.requests.snapshot(), [WRITE_UNITS]: runtime.store instanceof ItemShardStore ? runtime.store.requests.writeUnits : 0 }),
      ...(warmUpBatches === undefined ? {} : { warmUpBatches }),
    });
    await checkpoint();
    return { ...figures, windows: await committedRecords(brokers, `${name}-out`) };
  } finally {
    await driver.close();
    await runtime.close();
  }
}

/** A runtime of `env` on the emulators, its table and bucket made, its requests counted and traced in `spans`. */
async function benchRuntime(env: StreamExecutionEnvironment, brokers: readonly string[], emulators: EmulatorHost, name: string, clock: { now: number }, spans: SpanLog): Promise<PipelineRuntime> {
  const runtime = new PipelineRuntime(
    env,
    { tableName: name, snapshotBucket: name, kafka: { brokers: [...brokers], onRequest: spans.kafka }, dynamodb: emulators.dynamo, s3: emulators.s3 },
    { clock: () => clock.now },
  );
  runtime.requests.observe(spans.aws);
  await ensureStateTable(createDocumentClient(emulators.dynamo), name);
  await ensureBucket(createS3Client(emulators.s3), name);
  return runtime;
}

/** What {@link runSluiceStages} measured inside the processor's invocations: CPU, DynamoDB and S3 requests, write units; and the checkpoints' CPU. */
export interface StagesFigures {
  readonly cpuMicros: number;
  readonly invocations: number;
  readonly requests: number;
  readonly writeUnits: number;
  readonly checkpointCpuMicros: number;
}

/**
 * Every stage of a pipeline over topics loaded already, as Lambda runs them: each shard's
 * records `batch` at a time, from the committed log (a later stage reads what an earlier one
 * committed), with a checkpoint after each round of at most CHECKPOINT_INVOCATIONS invocations
 * a shard, until a round delivers nothing. This process's CPU is summed inside the processor's
 * invocations; the reads that stand for Lambda's poller, and the checkpoints, stay outside it.
 */
export async function runSluiceStages(env: StreamExecutionEnvironment, brokers: readonly string[], emulators: EmulatorHost, batch: number, name: string): Promise<StagesFigures> {
  const clock = { now: Date.now() };
  const runtime = await benchRuntime(env, brokers, emulators, name, clock, new SpanLog());
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  await admin.ensureTopics(runtime.plan.stages.flatMap((stage) => (stage.input.kind === 'repartition' ? [benchTopic(stage.input.topic, stage.input.partitions)] : [])));
  await admin.close();
  const requested = () => Object.values(runtime.requests.snapshot()).reduce((a, b) => a + b, 0);
  const written = () => (runtime.store instanceof ItemShardStore ? runtime.store.requests.writeUnits : 0);
  const inside = { cpuMicros: 0, invocations: 0, requests: 0, writeUnits: 0 };
  const measured = async (invoke: () => Promise<unknown>) => {
    const [requests, writeUnits] = [requested(), written()];
    const before = process.cpuUsage();
    await invoke();
    const used = process.cpuUsage(before);
    inside.cpuMicros += used.user + used.system;
    inside.invocations++;
    inside.requests += requested() - requests;
    inside.writeUnits += written() - writeUnits;
  };
  const driver = new LambdaDriver(runtime, clock, measured);
  let checkpointCpuMicros = 0;
  try {
    for (let quiet = 0; quiet < 2; ) {
      const delivered = await driver.drain(batch, CHECKPOINT_INVOCATIONS);
      const before = process.cpuUsage();
      await driver.checkpoint({ onTime: true });
      const used = process.cpuUsage(before);
      checkpointCpuMicros += used.user + used.system;
      // Twice nothing: the last round's output committed, and the next stage has read it.
      quiet = delivered === 0 ? quiet + 1 : 0;
    }
    return { ...inside, checkpointCpuMicros };
  } finally {
    await driver.close();
    await runtime.close();
  }
}

export async function runFloor(
  brokers: readonly string[],
  emulators: EmulatorHost,
  batch: number,
  events: readonly MSKEvent[],
  name: string,
  { warmUpBatches }: { warmUpBatches?: number } = {},
): Promise<RunFigures> {
  const client = createDocumentClient(emulators.dynamo);
  const spans = new SpanLog();
  const requests = new RequestCounter();
  requests.attach(client, 'DynamoDB');
  requests.observe(spans.aws);
  const tableName = `${name}-floor`;
  await ensureStateTable(client, tableName);
  const floor = await startFloorHandler({ brokers, client, tableName, output: `${name}-floor-out`, transactionalId: `${name}-floor`, onRequest: spans.kafka });
  try {
    const figures = await measureLoop(events, batch, floor.handle, emulators, spans, warmUpBatches === undefined ? {} : { warmUpBatches });
    return { ...figures, windows: await committedRecords(brokers, `${name}-floor-out`) };
  } finally {
    await floor.close();
    client.destroy();
  }
}

/** The committed records of a one-partition topic. */
async function committedRecords(brokers: readonly string[], topic: string): Promise<number> {
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const reader = new CommittedRangeReader({ brokers: [...brokers] });
  try {
    const [description] = await admin.describeTopics([topic]);
    return (await reader.read({ topic, partition: 0, from: 0, to: Number(description?.partitions[0]?.stable ?? 0) })).length;
  } finally {
    await reader.close();
    await admin.close();
  }
}

function modelledOf(runs: readonly RunFigures[]): ModelledBatch {
  const perBatch = (run: RunFigures, memoryMb: number) => modelledBilledMs(run.cpuMicros / 1_000 / run.batches, run.waitMs / run.batches, memoryMb);
  return {
    roundTrips: Object.fromEntries(SERVICES.map((service) => [service, median(runs.map((run) => run.roundTrips[service]))])) as Record<Service, number>,
    billedMs: Object.fromEntries(MODELLED_MEMORY_MB.map((memoryMb) => [memoryMb, median(runs.map((run) => perBatch(run, memoryMb)))])),
  };
}

export const spreadOf = (values: readonly number[]): Spread => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
export const perRecord = (run: RunFigures) => run.cpuMicros / run.records;
const emulatorPerRecord = (run: RunFigures) => (run.emulatorTicks * (1_000_000 / CLOCK_TICKS_PER_SECOND)) / run.records;

const settledRatio = (run: RunFigures) => run.settle.last / run.settle.first;

/** One run in a fresh process (bench/handler-run.ts), so that no run warms the next. */
async function runInProcess(request: RunRequest, cpuProfileDir: string | undefined): Promise<RunFigures> {
  const script = fileURLToPath(new URL('./handler-run.ts', import.meta.url));
  // A directory per run: each of the process's threads (tsx's loader has one) writes its own profile.
  const profiling = cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', join(cpuProfileDir, `${request.which}-batch-${request.batch}-${Date.now()}`)] : [];
  const child = spawn(process.execPath, [...profiling, '--import', 'tsx', script, JSON.stringify(request)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const result = parseResult(printed);
  if (!result) throw new Error(`the ${request.which} run of batch ${request.batch} exited (${code}) without its figures`);
  return result as RunFigures;
}

export async function measureHandlers({ brokers, batches, guarantees, runs, say, cpuProfileDir }: HandlerBenchOptions): Promise<HandlerRow[]> {
  const emulators = await EmulatorHost.start();
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const rows: HandlerRow[] = [];
  try {
    for (const guarantee of guarantees) {
      for (const batch of batches) {
        const warmUpBatches = warmUpBatchesFor(batch);
        const count = warmUpBatches * batch + Math.max(MIN_RECORDS, BATCHES_PER_RUN * batch);
        const sluice: RunFigures[] = [];
        const floor: RunFigures[] = [];
        for (let run = 0; run < runs; run++) {
          const name = `bench-handler-${guarantee.toLowerCase().replace(/_/g, '-')}-${batch}-${run}-${Date.now().toString(36)}`;
          const input = `${name}-orders`;
          await admin.ensureTopics([benchTopic(input, 1), benchTopic(`${name}-out`, 1), benchTopic(`${name}-floor-out`, 1)]);
          // Alternating which goes first spreads the machine's drift over both.
          const order = run % 2 === 0 ? (['sluice', 'floor'] as const) : (['floor', 'sluice'] as const);
          for (const which of order) {
            const figures = await runInProcess({ which, brokers, guarantee, batch, count, warmUpBatches, name, input, emulators: emulators.address }, cpuProfileDir);
            (which === 'sluice' ? sluice : floor).push(figures);
          }
          const [ours, theirs] = [sluice.at(-1), floor.at(-1)];
          if (ours?.windows !== theirs?.windows) throw new Error(`Sluice wrote ${ours?.windows} window sums and the floor ${theirs?.windows}: they do not do the same work`);
          say(`  ${guarantee} batch ${batch}, run ${run + 1}: Sluice ${sluice.map(perRecord).at(-1)?.toFixed(1)} µs/record, floor ${floor.map(perRecord).at(-1)?.toFixed(1)}, ${ours?.windows} window sums each`);
          await admin.deleteTopics([input, `${name}-out`, `${name}-floor-out`]).catch(() => undefined);
        }
        const sluiceSpread = spreadOf(sluice.map(perRecord));
        const medianRun = [...sluice].sort((a, b) => perRecord(a) - perRecord(b))[Math.floor(sluice.length / 2)];
        rows.push({
          guarantee,
          batch,
          sluice: sluiceSpread,
          floor: spreadOf(floor.map(perRecord)),
          emulatorsSluice: median(sluice.map(emulatorPerRecord)),
          emulatorsFloor: median(floor.map(emulatorPerRecord)),
          requestsPerBatch: medianRun?.requests ?? {},
          records: count,
          checkpointsSluice: median(sluice.map((run) => run.checkpointCpuMicros / run.records)),
          settled: { sluice: median(sluice.map(settledRatio)), floor: median(floor.map(settledRatio)) },
          modelled: { sluice: modelledOf(sluice), floor: modelledOf(floor) },
        });
      }
    }
  } finally {
    await admin.close();
    await emulators.stop();
  }
  return rows;
}

const format = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
export const spread = (s: Spread) => `${format(s.median)} (${format(s.min)}–${format(s.max)})`;

const withCheckpoints = (row: HandlerRow) => (row.sluice.median + row.checkpointsSluice) / row.floor.median;

/** The table, and one line per row that a script can read: `handler ÷ floor, EXACTLY_ONCE, batch 1,000: 1.23`. */
export function formatHandlerRows(rows: readonly HandlerRow[], runs: number): string {
  const lines = [
    `The processor handler alone against a hand-written floor (bench/contenders/kafkajs-floor-handler.ts), one partition, CPU of the handler's process per record: median of ${runs} runs (min–max), each run in a process of its own that first warms up on 400,000 records (40 to 1,500 batches). Settled: µs per record of the last third of the measured batches ÷ the first third, 1.00 when the run no longer gets faster. DynamoDB and S3 are emulated in another process, whose CPU is a column of its own; Kafka is the local broker. Checkpoints (coordinator and commit function) run every ${CHECKPOINT_RECORDS.toLocaleString('en')} records or ${CHECKPOINT_INVOCATIONS} invocations, whichever comes first; their CPU is counted apart, and a deployment pays it too (the floor has none).`,
    '',
    '| guarantee | batch | Sluice handler µs/record | floor µs/record | handler ÷ floor | with checkpoints ÷ floor | settled (Sluice, floor) | Sluice µs/batch | emulators µs/record (Sluice, floor) | DynamoDB and S3 requests per batch (Sluice) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => {
      const requests = Object.entries(row.requestsPerBatch).map(([operation, n]) => `${operation} ${n}`).join(', ');
      return `| ${row.guarantee} | ${row.batch.toLocaleString('en')} | ${spread(row.sluice)} | ${spread(row.floor)} | ${(row.sluice.median / row.floor.median).toFixed(2)} | ${withCheckpoints(row).toFixed(2)} | ${row.settled.sluice.toFixed(2)}, ${row.settled.floor.toFixed(2)} | ${format(row.sluice.median * row.batch)} | ${format(row.emulatorsSluice)}, ${format(row.emulatorsFloor)} | ${requests} |`;
    }),
    '',
    ...rows.map((row) => `handler ÷ floor, ${row.guarantee}, batch ${row.batch.toLocaleString('en')}: ${(row.sluice.median / row.floor.median).toFixed(2)}`),
    ...rows.map((row) => `handler with checkpoints ÷ floor, ${row.guarantee}, batch ${row.batch.toLocaleString('en')}: ${withCheckpoints(row).toFixed(2)}`),
    '',
    `Modelled billed duration per batch on Lambda (bench/critical-path.ts): the handler's CPU here, at the vCPU share of each memory size (a whole vCPU at 1,769 MB; 1,024 MB is what serverless.yml deploys), plus the waits of its longest chain of requests, each request at ${SERVICES.map((service) => `${service} ${ASSUMED_LATENCY_MS[service]} ms`).join(', ')}. A request waits for every request that ended before it started, as in this run; requests in flight together wait for the slowest. Warm containers only: a cold start is not in it. Medians of the runs.`,
    '',
    `| guarantee | batch | round trips on the critical path, Sluice (${SERVICES.join(', ')}) | the same, floor | ${MODELLED_MEMORY_MB.map((mb) => `Sluice ms at ${mb.toLocaleString('en')} MB`).join(' | ')} | ${MODELLED_MEMORY_MB.map((mb) => `floor ms at ${mb.toLocaleString('en')} MB`).join(' | ')} |`,
    `| --- | --- | --- | --- | ${MODELLED_MEMORY_MB.map(() => '--- | --- ').join('| ')}|`,
    ...rows.map(({ guarantee, batch, modelled: { sluice, floor } }) => {
      const trips = (path: ModelledBatch) => SERVICES.map((service) => path.roundTrips[service].toFixed(1)).join(', ');
      const billed = (path: ModelledBatch) => MODELLED_MEMORY_MB.map((mb) => String(path.billedMs[mb])).join(' | ');
      return `| ${guarantee} | ${batch.toLocaleString('en')} | ${trips(sluice)} | ${trips(floor)} | ${billed(sluice)} | ${billed(floor)} |`;
    }),
    '',
    ...rows.flatMap(({ guarantee, batch, modelled: { sluice, floor } }) =>
      MODELLED_MEMORY_MB.map(
        (mb) => `modelled billed duration, ${guarantee}, batch ${batch.toLocaleString('en')}, ${mb.toLocaleString('en')} MB: ${sluice.billedMs[mb]} ms (floor ${floor.billedMs[mb]} ms)`,
      ),
    ),
  ];
  return lines.join('\n');
}

/**
 * The handler's records/s per core at each batch beside Flink's from the throughput phase of the
 * same run, with a line per batch that a script can read.
 */
export function formatHandlerAgainstFlink(rows: readonly HandlerRow[], flinkRecordsPerCore: number): string {
  const perCore = (row: HandlerRow) => 1_000_000 / row.sluice.median;
  return [
    `Records/s per core of the processor handler's own CPU (the table above) beside Flink EXACTLY_ONCE's in the throughput phase of this run, ${Math.round(flinkRecordsPerCore).toLocaleString('en')}: the same orders and 5-minute sums. Flink's process does all of its work, its Kafka source and checkpoints included; the handler's leaves out what AWS does for it, the event-source mapping's polling and DynamoDB's and S3's work (the emulators' column above).`,
    '',
    '| guarantee | batch | Sluice handler records/s per core | ÷ Flink EXACTLY_ONCE |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.guarantee} | ${row.batch.toLocaleString('en')} | ${Math.round(perCore(row)).toLocaleString('en')} | ${(perCore(row) / flinkRecordsPerCore).toFixed(2)} |`),
    '',
    ...rows.map(
      (row) =>
        `handler records/s per core, ${row.guarantee}, batch ${row.batch.toLocaleString('en')}: ${Math.round(perCore(row)).toLocaleString('en')} (Flink EXACTLY_ONCE ${Math.round(flinkRecordsPerCore).toLocaleString('en')})`,
    ),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      batches: { type: 'string', default: '100,1000,10000' },
      guarantees: { type: 'string', default: 'EXACTLY_ONCE' },
      'cpu-prof': { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  const { brokers, release } = await acquireBrokers();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const rows = await measureHandlers({
      brokers,
      runs,
      batches: values.batches.split(',').map(Number),
      guarantees: values.guarantees.split(',') as Guarantee[],
      say,
      ...(values['cpu-prof'] ? { cpuProfileDir: values['cpu-prof'] } : {}),
    });
    say(`\n${formatHandlerRows(rows, runs)}`);
  } finally {
    await release();
  }
}
