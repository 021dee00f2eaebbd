// Checkpoint duration against total state size, with a fixed number of changed keys: a running
// sum per customer over `keys` customers (EXACTLY_ONCE sink, 4 shards), the handlers driven
// back to back by LambdaDriver on dynalite and s3rver, then `checkpoints` rounds of `changed`
// orders over random customers, each followed by a checkpoint that is timed from trigger to
// commit. Run by bench/run.ts in a process of its own, one per state size; prints RESULT JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDocumentClient, createS3Client } from '../lib/aws/clients.js';
import { createRecordWriter, KafkaAdmin, type OutputRecord } from '../lib/kafka/index.js';
import { startDynamoDbEmulatorThread, startS3Emulator } from '../lib/offline/emulators.js';
import { PipelineRuntime } from '../lib/aws/runtime.js';
import { checkpointManifestKey, readManifest } from '../lib/snapshot/checkpoint-state.js';
import { ensureBucket } from '../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../lib/testing/lambda-driver.js';
import { printResult, readJsonArgument } from './child-io.js';
import { benchTopic } from './orders.js';
import { customerTotalsPipeline } from './pipeline.js';

export interface StateSizeConfig {
  readonly brokers: string[];
  readonly keys: number;
  readonly changed: number;
  readonly checkpoints: number;
  readonly topicSuffix: string;
}

export interface StateSizeResult {
  readonly keys: number;
  readonly changed: number;
  /** Seconds to build the state: keys orders through the processor, with checkpoints. */
  readonly seedS: number;
  /** Each measured checkpoint, trigger to commit, in ms. */
  readonly checkpointMs: number[];
  /**
   * The measured checkpoints (1-based) whose merge read the whole state of a shard: after
   * them, that shard's state is one object again.
   */
  readonly wholeStateMerges: number[];
  /** Each round's processing of `changed` orders, in ms. */
  readonly batchMs: number[];
  /** AWS requests a measured checkpoint made, on average, by operation. */
  readonly requestsPerCheckpoint: Record<string, number>;
}

const PARTITIONS = 4;
const SEED_BATCH = 5_000;
// Keys seeded between two checkpoints. A transaction open longer than transaction.timeout.ms
// (15 minutes) is aborted by the broker (and Sluice rolls its shard back), so the seed takes
// checkpoints as a running pipeline would; this many keys take a few minutes here.
const SEED_KEYS_PER_CHECKPOINT = 200_000;

async function main(config: StateSizeConfig): Promise<StateSizeResult> {
  const { brokers } = config;
  const name = `state-size-${config.topicSuffix}`;
  const [input, output] = [`${name}-in`, `${name}-out`];
  const admin = new KafkaAdmin({ brokers });
  await admin.ensureTopics([input, output].map((topic) => benchTopic(topic, PARTITIONS)));
  const folder = mkdtempSync(join(tmpdir(), 'sluice-state-size-'));
  // On a thread of its own, so that seeding a million keys (one conditional write each) uses
  // both cores; on disk, so that the items stay off the JavaScript heaps.
  const dynamo = await startDynamoDbEmulatorThread(join(folder, 'dynamodb'));
  const s3 = await startS3Emulator(join(folder, 's3'));
  await ensureStateTable(createDocumentClient(dynamo.clientOptions), name);
  await ensureBucket(createS3Client(s3.clientOptions), name);

  const env = customerTotalsPipeline({ name, brokers, input, output });
  const clock = { now: 1_000_000 };
  const runtime = new PipelineRuntime(
    env,
    { tableName: name, snapshotBucket: name, kafka: { brokers }, dynamodb: dynamo.clientOptions, s3: s3.clientOptions },
    { clock: () => clock.now },
  );
  const driver = new LambdaDriver(runtime, clock);
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers });
  const send = async (customers: Iterable<number>) => {
    let batch: OutputRecord[] = [];
    for (const customer of customers) {
      batch.push({ topic: input, key: `c-${customer}`, value: JSON.stringify({ customer: `c-${customer}`, amount: 1 }) });
      if (batch.length === 10_000) {
        await writer.write(batch);
        batch = [];
      }
    }
    await writer.write(batch);
    await writer.flush();
  };

  const seeding = Date.now();
  let seeded = 0;
  for (let from = 0; from < config.keys; from += SEED_KEYS_PER_CHECKPOINT) {
    await send(Array.from({ length: Math.min(SEED_KEYS_PER_CHECKPOINT, config.keys - from) }, (_, i) => from + i));
    await driver.drain(SEED_BATCH);
    seeded = await driver.checkpoint();
  }
  const seedS = (Date.now() - seeding) / 1_000;
  const snapshots = runtime.snapshots;
  if (!snapshots) throw new Error('the state-size benchmark needs the snapshot store');
  const stateObjects = async (checkpoint: number) =>
    new Map(((await readManifest(snapshots, checkpointManifestKey(checkpoint)))?.shards ?? []).map((shard) => [shard.partition, shard.state.length]));
  let objectsBefore = await stateObjects(seeded);

  let random = 12345;
  const nextCustomer = () => {
    random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0;
    return random % config.keys;
  };
  const checkpointMs: number[] = [];
  const wholeStateMerges: number[] = [];
  const batchMs: number[] = [];
  const requestsPerCheckpoint: Record<string, number> = {};
  for (let round = 0; round < config.checkpoints; round++) {
    const customers = new Set<number>();
    while (customers.size < Math.min(config.changed, config.keys)) customers.add(nextCustomer());
    await send(customers);
    const processing = Date.now();
    await driver.drain(SEED_BATCH);
    batchMs.push(Date.now() - processing);
    const before = runtime.requests.snapshot();
    const checkpointing = Date.now();
    const checkpoint = await driver.checkpoint();
    checkpointMs.push(Date.now() - checkpointing);
    for (const [operation, count] of Object.entries(runtime.requests.snapshot())) {
      requestsPerCheckpoint[operation] = (requestsPerCheckpoint[operation] ?? 0) + (count - (before[operation] ?? 0)) / config.checkpoints;
    }
    const objectsAfter = await stateObjects(checkpoint);
    if ([...objectsAfter].some(([partition, n]) => n === 1 && (objectsBefore.get(partition) ?? 0) > 1)) wholeStateMerges.push(round + 1);
    objectsBefore = objectsAfter;
  }

  await driver.close();
  await writer.close();
  await runtime.close();
  await dynamo.close();
  await s3.close();
  await admin.deleteTopics([input, output]).catch(() => undefined);
  await admin.close();
  rmSync(folder, { recursive: true, force: true });
  return { keys: config.keys, changed: config.changed, seedS, checkpointMs, wholeStateMerges, batchMs, requestsPerCheckpoint };
}

printResult(await main(readJsonArgument('state-size.ts <config JSON>') as StateSizeConfig));
process.exit(0);
