// A new container of the processor: what it costs before and during its first batch.
// `npm run bench:cold-start [-- --runs 3]` packages the bench pipeline as it deploys
// (`npx serverless package`: the minified esbuild bundle in its zip), then in a fresh Node.js
// process per run imports the bundle — Lambda's INIT phase, which AWS bills for managed
// runtimes since August 2025 — and hands it a batch of 1,000 orders of a shard that already
// has state, then a second batch, against the local broker and DynamoDB and S3 emulated in
// another process. The first batch's round trips, connection set-ups included, are modelled as
// bench/critical-path.ts models a warm batch's. `npm run bench` puts the table in its report.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import type { MSKEvent } from 'aws-lambda';
import { createDocumentClient, createS3Client } from '../lib/aws/clients.js';
import { processorHandler } from '../lib/aws/handlers.js';
import { PipelineRuntime } from '../lib/aws/runtime.js';
import { KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { ensureBucket } from '../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../lib/state/dynamodb-shard-store.js';
import { parseResult } from './child-io.js';
import { criticalPath, MODELLED_MEMORY_MB, modelledBilledMs, serviceOf, SERVICES, SpanLog, type CriticalPath, type Span } from './critical-path.js';
import { buildEvents, EmulatorHost } from './handler.js';
import { benchTopic } from './orders.js';
import { benchPipeline } from './pipeline.js';
import { median } from './scaling.js';

const run = promisify(execFile);
const BATCH = 1_000;

/** A round trip of a connection's set-up (TCP, then TLS 1.3), to an AWS endpoint or a broker, in AWS. */
const SET_UP_ROUND_TRIP_MS = 2;
/** TCP and TLS; a broker's connection also authenticates with MSK IAM, a SASL handshake and an authentication. */
const AWS_SET_UP_ROUND_TRIPS = 2;
const BROKER_SET_UP_ROUND_TRIPS = 4;

export interface ColdStartFigures {
  readonly zipBytes: number;
  readonly bundleBytes: number;
  /** The bundle's import in a fresh process, ms: medians over the runs. */
  readonly initCpuMs: number;
  readonly initWallMs: number;
  /** The first batch's CPU, and the second's in the same process, ms. */
  readonly firstBatchCpuMs: number;
  readonly secondBatchCpuMs: number;
  /** The first batch's critical path at the assumed latencies, without connection set-ups. */
  readonly firstBatch: CriticalPath;
  /** Connections the first batch opened: one an AWS service it used, one a Kafka ApiVersions request. */
  readonly connections: { readonly aws: number; readonly kafka: number };
  /** Modelled billed ms of INIT and the first batch, by memory size. */
  readonly billedMs: Readonly<Record<number, number>>;
  readonly runs: number;
}

interface ChildFigures {
  readonly initCpuMs: number;
  readonly initWallMs: number;
  readonly batchCpuMs: readonly number[];
}

// Runs in a fresh process, as Lambda's runtime does: import the bundle, then call its handler.
const CHILD_SCRIPT = `
const eventsFile = process.argv[1], bundle = process.argv[2], indexes = JSON.parse(process.argv[3]);
const events = JSON.parse((await import('node:fs')).readFileSync(eventsFile, 'utf8'));
const cpuMs = (used) => (used.user + used.system) / 1000;
const cpu = process.cpuUsage(), wall = performance.now();
const { handler } = await import(bundle);
const initCpuMs = cpuMs(process.cpuUsage(cpu)), initWallMs = performance.now() - wall;
const batchCpuMs = [];
for (const index of indexes) {
  const before = process.cpuUsage();
  await handler(events[index]);
  batchCpuMs.push(cpuMs(process.cpuUsage(before)));
}
process.stdout.write('RESULT ' + JSON.stringify({ initCpuMs, initWallMs, batchCpuMs }) + '\\n');
process.exit(0);
`;

/** The processor's bundle as `sluice deploy --package-only` zips it, unzipped into `folder`. */
async function packageProcessor(folder: string, env: NodeJS.ProcessEnv): Promise<{ zipBytes: number; bundle: string }> {
  const packaged = join(folder, 'package');
  await run(process.execPath, ['bin/sluice.js', 'deploy', 'bench/cold-start-pipeline.ts', '--package-only', '--package', packaged], {
    env: { ...env, SLUICE_KAFKA_TRIGGER: 'msk', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: 'none' },
    timeout: 240_000,
  });
  const zip = join(packaged, 'processorstage1.zip');
  const unzipped = join(folder, 'processor');
  await run('python3', ['-m', 'zipfile', '-e', zip, unzipped]);
  return { zipBytes: statSync(zip).size, bundle: join(unzipped, 'functions', 'processor.mjs') };
}

function runChild(eventsFile: string, bundle: string, indexes: readonly number[], env: NodeJS.ProcessEnv): Promise<ChildFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD_SCRIPT, eventsFile, bundle, JSON.stringify(indexes)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('exit', (code) => {
      const result = parseResult(printed);
      if (code === 0 && result) resolve(result as ChildFigures);
      else reject(new Error(`The cold-start process exited with ${code}:\n${errors.slice(-2_000)}`));
    });
  });
}

/** The first batch of a new container, in this process: its requests, for the critical path. */
async function firstBatchSpans(brokers: readonly string[], emulators: EmulatorHost, names: { table: string; input: string; output: string }, event: MSKEvent): Promise<Span[]> {
  const spans = new SpanLog();
  const runtime = new PipelineRuntime(
    benchPipeline({ brokers, input: names.input, output: names.output, guarantee: 'EXACTLY_ONCE', checkpointIntervalMs: 5_000 }),
    {
      tableName: names.table,
      snapshotBucket: names.table,
      kafka: { brokers: [...brokers], onRequest: spans.kafka },
      dynamodb: emulators.dynamo,
      s3: emulators.s3,
    },
  );
  runtime.requests.observe(spans.aws);
  try {
    await processorHandler(runtime, 'stage-1')(event);
    return spans.drain();
  } finally {
    await runtime.close();
  }
}

export async function measureColdStart({ brokers, runs, say }: { brokers: readonly string[]; runs: number; say: (line: string) => void }): Promise<ColdStartFigures> {
  const folder = mkdtempSync(join(tmpdir(), 'sluice-cold-start-'));
  const emulators = await EmulatorHost.start();
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const name = `bench-cold-${Date.now().toString(36)}`;
  const [input, output] = [`${name}-orders`, `${name}-out`];
  try {
    await admin.ensureTopics([benchTopic(input, 1), benchTopic(output, 1)]);
    await ensureStateTable(createDocumentClient(emulators.dynamo), name);
    await ensureBucket(createS3Client(emulators.s3), name);
    const env = {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS: brokers.join(','),
      BENCH_INPUT: input,
      BENCH_OUTPUT: output,
    };
    say('  packaging the bench pipeline (npx serverless package)...');
    const { zipBytes, bundle } = await packageProcessor(folder, env);
    // One batch that gives the shard state, then per run a cold batch and a warm one, then the in-process first batch.
    const events = buildEvents(input, BATCH * (2 + 2 * runs), BATCH, brokers);
    const eventsFile = join(folder, 'events.json');
    writeFileSync(eventsFile, JSON.stringify(events));
    const credentials = emulators.dynamo.credentials;
    const functionEnv = {
      ...env,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials?.accessKeyId ?? 'local',
      AWS_SECRET_ACCESS_KEY: credentials?.secretAccessKey ?? 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SLUICE_STAGE: 'stage-1',
      SLUICE_STATE_TABLE: name,
      SLUICE_SNAPSHOT_BUCKET: name,
      SLUICE_DYNAMODB_ENDPOINT: emulators.dynamo.endpoint ?? '',
      SLUICE_S3_ENDPOINT: emulators.s3.endpoint ?? '',
    };
    await runChild(eventsFile, bundle, [0], functionEnv);
    const measured: ChildFigures[] = [];
    for (let index = 0; index < runs; index++) {
      measured.push(await runChild(eventsFile, bundle, [1 + 2 * index, 2 + 2 * index], functionEnv));
      say(`  cold start, run ${index + 1}: INIT ${measured.at(-1)?.initCpuMs.toFixed(0)} ms of CPU, first batch ${measured.at(-1)?.batchCpuMs[0]?.toFixed(0)} ms`);
    }
    const last = events.at(-1);
    if (!last) throw new Error('no event was built');
    const spans = await firstBatchSpans(brokers, emulators, { table: name, input, output }, last);
    const firstBatch = criticalPath(spans);
    const connections = {
      aws: SERVICES.filter((service) => service !== 'Kafka' && spans.some((span) => serviceOf(span.operation) === service)).length,
      kafka: spans.filter((span) => span.operation === 'Kafka.ApiVersions').length,
    };
    const setUpMs = SET_UP_ROUND_TRIP_MS * (connections.aws * AWS_SET_UP_ROUND_TRIPS + connections.kafka * BROKER_SET_UP_ROUND_TRIPS);
    const initCpuMs = median(measured.map((figures) => figures.initCpuMs));
    const firstBatchCpuMs = median(measured.map((figures) => figures.batchCpuMs[0] ?? 0));
    return {
      zipBytes,
      bundleBytes: statSync(bundle).size,
      initCpuMs,
      initWallMs: median(measured.map((figures) => figures.initWallMs)),
      firstBatchCpuMs,
      secondBatchCpuMs: median(measured.map((figures) => figures.batchCpuMs[1] ?? 0)),
      firstBatch,
      connections,
      billedMs: Object.fromEntries(MODELLED_MEMORY_MB.map((mb) => [mb, modelledBilledMs(initCpuMs + firstBatchCpuMs, firstBatch.waitMs + setUpMs, mb)])),
      runs,
    };
  } finally {
    await admin.deleteTopics([input, output]).catch(() => undefined);
    await admin.close();
    await emulators.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

export function formatColdStart(figures: ColdStartFigures): string {
  const trips = SERVICES.map((service) => `${service} ${figures.firstBatch.roundTrips[service]}`).join(', ');
  return [
    `The processor's zip as \`serverless package\` builds it: ${kib(figures.zipBytes)} (its bundle ${kib(figures.bundleBytes)}, minified). In a fresh Node.js process, medians of ${figures.runs} runs: the bundle's import (INIT) takes ${figures.initCpuMs.toFixed(0)} ms of CPU (${figures.initWallMs.toFixed(0)} ms), the first batch of ${BATCH.toLocaleString('en')} orders ${figures.firstBatchCpuMs.toFixed(0)} ms of CPU and the second ${figures.secondBatchCpuMs.toFixed(0)} ms.`,
    '',
    `The first batch's critical path, as bench/critical-path.ts models a warm one: ${trips} round trips, ${figures.firstBatch.waitMs} ms; and it opens ${figures.connections.aws} AWS connections and ${figures.connections.kafka} to brokers (one for each ApiVersions request), each taken to be on the path: ${AWS_SET_UP_ROUND_TRIPS} round trips of ${SET_UP_ROUND_TRIP_MS} ms to an AWS endpoint (TCP, TLS 1.3), ${BROKER_SET_UP_ROUND_TRIPS} to a broker (and MSK IAM's SASL handshake and authentication).`,
    '',
    `| memory | modelled billed ms of INIT and the first batch |`,
    `| --- | --- |`,
    ...MODELLED_MEMORY_MB.map((mb) => `| ${mb.toLocaleString('en')} MB | ${figures.billedMs[mb]} |`),
    '',
    ...MODELLED_MEMORY_MB.map((mb) => `modelled cold start, EXACTLY_ONCE, batch ${BATCH.toLocaleString('en')}, ${mb.toLocaleString('en')} MB: ${figures.billedMs[mb]} ms`),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  const { brokers, release } = await acquireBrokers();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    say(`\n${formatColdStart(await measureColdStart({ brokers, runs: Number(values.runs), say }))}`);
  } finally {
    await release();
  }
}
