// One fault schedule of the serverless runtime, shared by the end-to-end test and the chaos
// runner (`npm run chaos`): produce generated orders, play Lambda's part with crashes at every
// step boundary, redeliveries and cut batches, run coordinator and commit function now and
// then, and compare the read_committed output with a plain computation. No vitest here.
import { OutputCommit, seconds } from '../../lib/api/index.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { createDocumentClient, createS3Client, type AwsClientOptions } from '../../lib/aws/clients.js';
import { listCheckpoints } from '../../lib/snapshot/checkpoint-state.js';
import { ensureBucket, S3SnapshotStore } from '../../lib/snapshot/s3-store.js';
import { connectKafka, createRecordWriter, type KafkaAdmin, type KafkaConnectionOptions, type KafkaRecord } from '../../lib/kafka/index.js';
import { planPipeline } from '../../lib/plan/planner.js';
import { planTopics } from '../../lib/plan/topics.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { listShards, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { Processor, type ProcessorStep } from '../../lib/runtime/processor.js';
import { wakeCoordinator } from '../../lib/runtime/quiescence.js';
import { restoreSnapshot, SavepointNotReadyError, writeSavepoint } from '../../lib/runtime/savepoints.js';
import { DynamoCoordinatorStore, type CoordinatorRecord } from '../../lib/state/coordinator-store.js';
import { DynamoShardStore, ensureStateTable } from '../../lib/state/dynamodb-shard-store.js';
import { ShardFencedError } from '../../lib/state/shard-store.js';
import { avroOrders } from './avro-orders.js';
import { consumeTopic, uniqueName } from './kafka-io.js';
import { compareOutput, expectedOutput, resultKey, SCHEDULE_KINDS, type ScheduleKind } from './order-totals-kinds.js';
import { closingOrders, closingOrdersOnEveryPartition, generateOrders, seededRandom } from './orders.js';
import { orderTotalsPipeline, type Total } from './pipelines.js';

export type { ScheduleKind } from './order-totals-kinds.js';

const PARTITIONS = 3;
const SETTLE_ROUNDS = 30;
/** Lambda's limit on one invocation: past it the call is abandoned and retried, and may run on as a zombie. */
const INVOCATION_TIMEOUT_MS = 60_000;
/** A schedule still running after this long reports the steps it took last, rather than vitest's bare timeout. */
const SCHEDULE_DEADLINE_MS = 240_000;
const TRACE_STEPS = 60;

export interface ScheduleEnvironment {
  /** Where the harness writes the input and reads the output. */
  readonly brokers: readonly string[];
  /** How the runtime reaches the same cluster, when not as the harness does (TLS, SASL). */
  readonly runtimeKafka?: KafkaConnectionOptions;
  readonly admin: KafkaAdmin;
  readonly dynamo: AwsClientOptions;
  readonly s3: AwsClientOptions;
}

export interface ScheduleResult {
  readonly seed: number;
  /** The prefix of every topic the schedule made. */
  readonly namespace: string;
  readonly kind: ScheduleKind;
  readonly outputCommit: OutputCommit;
  readonly stages: number;
  /** Savepoints restored mid-run (0 or 1). */
  readonly restores: number;
  /** What differs from the expected output; empty when the output is exact. */
  readonly problems: string[];
  readonly crashes: Partial<Record<ProcessorStep, number>>;
  readonly redelivered: number;
  readonly cut: number;
  /** Times two invocations, coordinators or commit functions ran at once. */
  readonly concurrent: number;
  /** DynamoDB requests throttled, and answered 503 after they had succeeded. */
  readonly dynamoFaults: FaultCounts;
  /** The same for S3 (SlowDown before, 500 after). */
  readonly s3Faults: FaultCounts;
  /** Checkpoints whose manifest was written. */
  readonly checkpoints: number;
  /** Rollbacks of lost transactions that shards did (the coordinator record forgets them once a checkpoint covers them). */
  readonly rollbacks: number;
  readonly brokerRestarts: number;
  /** Failures other than the injected crashes and fencing (a restarting broker's), retried as Lambda would, by error name. */
  readonly retriedErrors: Record<string, number>;
}

export interface ScheduleOptions {
  /** Orders to generate (default 3,000). */
  readonly orders?: number;
  /** Restarts the Kafka broker; given, the schedule does so in its second and fifth rounds of deliveries. */
  readonly restartBroker?: () => Promise<void>;
  /** A schema registry's URL: orders and totals then go in Avro (test/helpers/avro-orders.ts), not JSON. */
  readonly avroRegistry?: string;
  /** When the totals become visible; by default {@link outputCommitOf} the seed. */
  readonly outputCommit?: OutputCommit;
  /**
   * Takes a savepoint in the third round of deliveries and restores it, as an operator does:
   * deliveries stopped, the coordinator run until a savepoint can be taken, the restore, and
   * the deliveries go on from where the trigger was (the restored shards read the gap).
   */
  readonly restore?: boolean;
}

/** The coordinator runs a savepoint gets to wait for a committed checkpoint, a rollback's end, or a checkpoint that covers per-batch output. */
const SAVEPOINT_ATTEMPTS = 20;

/** Seeds 2 and 3 of every 4 commit per batch, the others at checkpoints: consecutive seeds (whose kinds alternate) get both. */
export function outputCommitOf(seed: number): OutputCommit {
  return Math.floor(seed / 2) % 2 === 1 ? OutputCommit.PER_BATCH : OutputCommit.ON_CHECKPOINT;
}

interface FaultCounts {
  throttled: number;
  ambiguous: number;
}

class Crash extends Error {}
class InvocationTimeout extends Error {
  override readonly name = 'InvocationTimeout';
}

/** `running`, or an InvocationTimeout once `ms` have passed; `running` goes on regardless. */
function timedOut<T>(running: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InvocationTimeout(`no answer in ${ms / 1000} s`)), ms);
  });
  // An abandoned call that fails later fails unobserved, as a zombie's does.
  running.catch(() => undefined);
  return Promise.race([running, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Makes DynamoDB or S3 misbehave as they do under load: some requests are throttled before
 * they reach the service, and some succeed but answer 5xx, so that the SDK's retry meets its
 * own write (a conditional write then fails on it). The SDK's standard retries handle both.
 */
function injectFaults(
  client: DynamoDBDocumentClient | S3Client,
  random: () => number,
  counts: FaultCounts,
  errors: { readonly throttled: string; readonly ambiguous: string },
) {
  const failure = (name: string, status: number) =>
    Object.assign(new Error(`injected ${name}`), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
  (client.middlewareStack as DynamoDBDocumentClient['middlewareStack']).add(
    (next) => async (args) => {
      if (random() < 0.03) {
        counts.throttled++;
        throw failure(errors.throttled, errors.throttled === 'SlowDown' ? 503 : 400);
      }
      const result = await next(args);
      if (random() < 0.03) {
        counts.ambiguous++;
        throw failure(errors.ambiguous, errors.ambiguous === 'InternalError' ? 500 : 503);
      }
      return result;
    },
    { step: 'finalizeRequest', priority: 'low', name: 'sluiceFaultInjection' },
  );
}

export async function runSchedule(
  environment: ScheduleEnvironment,
  kind: ScheduleKind,
  seed: number,
  options: ScheduleOptions = {},
): Promise<ScheduleResult> {
  const { brokers, admin } = environment;
  const random = seededRandom(seed);
  const jitter = seededRandom(seed + 0x9e3779b9);
  const name = uniqueName('eo');
  const input = `${name}-orders`;
  const avro = options.avroRegistry ? await avroOrders(options.avroRegistry, input, `${name}-out`) : undefined;
  const outputCommit = options.outputCommit ?? outputCommitOf(seed);
  const plan = planPipeline(
    orderTotalsPipeline({ name, input, brokers, ...SCHEDULE_KINDS[kind], outputCommit, ...(avro ? { formats: avro.formats } : {}) }),
  );
  await admin.ensureTopics([
    { topic: input, partitions: PARTITIONS },
    { topic: `${name}-out`, partitions: 2 },
    ...planTopics(plan).repartitions.map(({ topic, partitions }) => ({ topic, partitions })),
  ]);
  const orders = generateOrders({ count: options.orders ?? 3_000, seed, categories: 6 });
  const producer = createRecordWriter('AT_LEAST_ONCE', { brokers });
  // A restore moves each key's state to the partition Kafka's default partitioner gives the key,
  // and refuses records past the snapshot that sit elsewhere: with one, orders go where it puts them.
  const closing = options.restore ? closingOrdersOnEveryPartition(orders, PARTITIONS) : closingOrders(orders, PARTITIONS);
  await producer.write(
    [...orders, ...closing].map(({ late: _late, ...order }, index, all) => ({
      topic: input,
      ...(options.restore ? {} : { partition: Number(order.category.split('-')[1]) % PARTITIONS }),
      key: order.category,
      value: avro ? avro.encode(order, index, all.length) : JSON.stringify(order),
    })),
  );
  await producer.flush();
  await producer.close();

  const client = createDocumentClient({ ...environment.dynamo, maxAttempts: 10 });
  await ensureStateTable(client, name);
  const dynamoFaults = { throttled: 0, ambiguous: 0 };
  injectFaults(client, random, dynamoFaults, { throttled: 'ThrottlingException', ambiguous: 'ServiceUnavailable' });
  const s3Client = createS3Client({ ...environment.s3, maxAttempts: 10 });
  await ensureBucket(s3Client, name);
  const s3Faults = { throttled: 0, ambiguous: 0 };
  injectFaults(s3Client, random, s3Faults, { throttled: 'SlowDown', ambiguous: 'InternalError' });
  const snapshots = new S3SnapshotStore(s3Client, name, `${name}/`);
  const store = new DynamoShardStore(client, name);
  const coordinator = new DynamoCoordinatorStore(client, name);
  let now = 1_000_000;
  const clock = () => now;
  const crashes: Partial<Record<ProcessorStep, number>> = {};
  const onStep = (step: ProcessorStep) => {
    // About one invocation in five dies somewhere, as when three boundaries crashed at 8% each.
    if (random() < 0.05) {
      crashes[step] = (crashes[step] ?? 0) + 1;
      throw new Crash(step);
    }
  };
  const kafka = connectKafka(environment.runtimeKafka ?? { brokers });
  const processor = new Processor({ plan, store, coordinator, kafka, clock, onStep, snapshots });
  const { committer, reader } = kafka;
  const shards = await listShards(plan, admin);

  const retriedErrors: Record<string, number> = {};
  const started = Date.now();
  const steps: string[] = [];
  const step = (what: string) => {
    steps.push(`${Date.now() - started} ms ${what}`);
    if (steps.length > TRACE_STEPS) steps.shift();
  };
  const stuck = (what: string) => new Error(`${kind} seed ${seed} ${what}; its last steps:\n  ${steps.join('\n  ')}`);
  const checkDeadline = () => {
    if (Date.now() - started > SCHEDULE_DEADLINE_MS) throw stuck(`still ran after ${SCHEDULE_DEADLINE_MS / 1000} s`);
  };
  /** The harness's own calls, which no Lambda retries: one that hangs fails the schedule, naming where. */
  const bounded = async <T>(what: string, running: Promise<T>): Promise<T> => {
    try {
      return await timedOut(running, INVOCATION_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof InvocationTimeout) throw stuck(`waited over ${INVOCATION_TIMEOUT_MS / 1000} s for ${what}`);
      throw error;
    }
  };
  /**
   * Runs `run` until it succeeds, as Lambda retries a failed invocation with the same input;
   * one that outlasts Lambda's timeout is retried too, while it runs on.
   */
  const retried = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      checkDeadline();
      try {
        const result = await timedOut(run(), INVOCATION_TIMEOUT_MS);
        step(`${what}: done`);
        return result;
      } catch (error) {
        step(`${what}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
        if (attempt > 60) throw error;
        if (!(error instanceof Crash || error instanceof ShardFencedError)) {
          const errorName = error instanceof Error ? error.name : 'unknown';
          retriedErrors[errorName] = (retriedErrors[errorName] ?? 0) + 1;
        }
        // Two retry loops on one shard fence each other; jitter lets one of them through. It is
        // seeded too, though the broker's timing still varies how concurrent runs interleave
        // (the deterministic simulation fixes that: test/simulation).
        await new Promise((resolve) => setTimeout(resolve, jitter() * 20 * Math.min(attempt + 1, 10)));
      }
    }
  };
  let rollbacks = 0;
  const invoke = async (target: ShardTarget, records: KafkaRecord[]) => {
    const report = await retried(`${target.stageId} ${target.topic}-${target.partition}, ${records.length} records`, () =>
      processor.processShard(target.stageId, target.topic, target.partition, records),
    );
    if (report.rollback) rollbacks++;
    return report;
  };
  let concurrent = 0;
  /** Now and then, two at once: overlapping retries, a zombie beside its successor, two coordinators. */
  const maybeTwice = async (run: () => Promise<unknown>) => {
    if (random() < 0.1) {
      concurrent++;
      await Promise.all([run(), run()]);
    } else {
      await run();
    }
  };
  const coordinate = async () => {
    now += seconds(10);
    const tick = async (target: ShardTarget) => {
      await invoke(target, []);
    };
    await maybeTwice(() => retried('coordinator', () => runCoordinator({ plan, store, coordinator, shards, clock, tick, snapshots })));
    await maybeTwice(() => retried('commit function', () => commitCompletedCheckpoints({ plan, store, coordinator, committer, shards, snapshots })));
  };
  let brokerRestarts = 0;
  let rounds = 0;
  let restores = 0;
  /** The operator's savepoint and restore, with the deliveries stopped (see {@link ScheduleOptions.restore}). */
  const restoreMidRun = async () => {
    const savepoint = `mid-run-${seed}`;
    const savepointOptions = { plan, store, coordinator, committer, snapshots, shards, clock };
    for (let attempt = 0; ; attempt++) {
      // A savepoint saves the latest committed checkpoint: the operator waits for one.
      if ((await retried('coordinator record', () => coordinator.get())).committed === 0 && attempt < SAVEPOINT_ATTEMPTS) {
        await coordinate();
        continue;
      }
      try {
        await bounded('the savepoint', writeSavepoint(savepointOptions, savepoint));
        step('savepoint: done');
        break;
      } catch (error) {
        if (!(error instanceof SavepointNotReadyError) || attempt === SAVEPOINT_ATTEMPTS) throw error;
        step(`savepoint: ${error.message}`);
        await coordinate();
      }
    }
    const abortTransactionsOf = (target: ShardTarget) => processor.abortTransactionsOf(target);
    await bounded('the restore', restoreSnapshot({ ...savepointOptions, reader, abortTransactionsOf }, { savepoint }));
    await bounded('the coordinator to wake', wakeCoordinator(coordinator, undefined));
    step('restore: done');
    restores++;
  };

  let unsettled: string | undefined;
  const positions = new Map(shards.map((target) => [target, 0]));
  let redelivered = 0;
  let cut = 0;
  /**
   * One round of the event-source mapping: each shard's new committed records, now and then cut
   * or delivered twice, or to two invocations at once. Returns how many it delivered.
   */
  const deliverRound = async (): Promise<number> => {
    let delivered = 0;
    for (const target of shards) {
      const maxRecords = 20 + Math.floor(random() * 150);
      const poll = await retried(`poll ${target.topic}-${target.partition}`, () =>
        reader.readAvailable(target.topic, target.partition, positions.get(target) ?? 0, maxRecords),
      );
      let records = poll.records;
      if (records.length === 0) continue;
      delivered += records.length;
      if (random() < 0.1 && records.length > 5) {
        cut++;
        records = records.slice(3);
      }
      await maybeTwice(() => invoke(target, records));
      if (random() < 0.1) {
        redelivered++;
        await invoke(target, records);
      }
      positions.set(target, poll.next);
      now += 500;
    }
    return delivered;
  };
  try {
    for (let quietRounds = 0; quietRounds < 4; ) {
      const delivered = await deliverRound();
      rounds++;
      if (options.restartBroker && (rounds === 2 || rounds === 5)) {
        brokerRestarts++;
        await options.restartBroker();
      }
      if (options.restore && rounds === 3) await restoreMidRun();
      if (delivered === 0 || random() < 0.3) await coordinate();
      quietRounds = delivered === 0 ? quietRounds + 1 : 0;
    }
    // A rollback, a held-back slot or a catch-up each take a checkpoint or two more to reach the
    // output: the schedule ends once a few checkpoints have committed after the input went quiet.
    // The mapping goes on delivering meanwhile, as Lambda's does: a later stage's input becomes
    // readable only when the checkpoint that covers it commits.
    const quietCommitted = (await retried('coordinator record', () => coordinator.get())).committed;
    for (let round = 0; ; round++) {
      const delivered = await deliverRound();
      const record = await retried('coordinator record', () => coordinator.get());
      if (delivered === 0 && record.committed >= quietCommitted + plan.stages.length + 2 && (record.rollbacks ?? []).every((r) => r.done)) break;
      // At rest, the coordinator triggers no more checkpoints: what it left must be the whole output.
      if (record.asleep) break;
      if (round === SETTLE_ROUNDS) {
        unsettled = `did not settle in ${SETTLE_ROUNDS} coordinator runs after the input went quiet: ${describeRecord(record)}`;
        break;
      }
      await coordinate();
    }
  } finally {
    await bounded('the processor and its Kafka clients to close', (async () => {
      await processor.close();
      await kafka.close();
    })());
  }
  const expected = expectedOutput(kind, orders);
  const consumed = await bounded('the output to be read', consumeTopic(`${name}-out`, { brokers, expected: expected.size }));
  const written = avro ? await avro.decodeTotals(consumed.map((message) => message.bytes)) : consumed.map((message) => JSON.parse(message.value ?? '') as Total);
  const problems = compareOutput(kind, written, expected).map((problem) => {
    // Where a result written twice lies in the log, for the replay.
    const key = / written twice$/.test(problem) ? problem.replace(/ written twice$/, '') : undefined;
    if (!key) return problem;
    const where = consumed.filter((_, i) => {
      const total = written[i];
      return total !== undefined && resultKey(kind, total) === key;
    });
    return `${problem} (at ${where.map((m) => `${m.partition}@${m.offset}`).join(' and ')})`;
  });
  if (problems.length > 0 && !unsettled) {
    problems.push(`at the end: ${describeRecord(await retried('coordinator record', () => coordinator.get()))}; rollbacks done ${rollbacks}`);
  }
  return {
    seed,
    namespace: name,
    kind,
    outputCommit,
    stages: plan.stages.length,
    problems: [...(unsettled ? [unsettled] : []), ...problems],
    crashes,
    redelivered,
    cut,
    concurrent,
    dynamoFaults,
    s3Faults,
    checkpoints: (await listCheckpoints(snapshots)).length,
    rollbacks,
    brokerRestarts,
    restores,
    retriedErrors,
  };
}

function describeRecord(record: CoordinatorRecord): string {
  const rollbacks = (record.rollbacks ?? []).map((r) => `${r.stageId}/${r.topic}/${r.partition}${r.done ? ' (done)' : ''}`);
  return `checkpoints triggered ${record.triggered}, completed ${record.completed}, committed ${record.committed}; rollbacks ${rollbacks.join(', ') || 'none'}`;
}
