import type { Plan } from '../plan/plan.js';
import { consumerGroupOf } from '../plan/names.js';
import { assertDeployable, planPipeline } from '../plan/planner.js';
import { planTopics } from '../plan/topics.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import { createDocumentClient, createS3Client, type AwsClientOptions } from '../aws/clients.js';
import { KafkaAdmin } from '../kafka/admin.js';
import { brokersFromEnvironment } from '../kafka/connection.js';
import { CommittedRangeReader } from '../kafka/range-reader.js';
import type { OutputRecord } from '../kafka/records.js';
import { createRecordWriter, type RecordWriter } from '../kafka/writer.js';
import { coordinatorPeriodMs } from '../runtime/coordinator-loop.js';
import type { BatchReport } from '../runtime/processor.js';
import type { CoordinatorSchedule } from '../runtime/quiescence.js';
import { commitHandler, coordinatorHandler, processorHandler } from '../aws/handlers.js';
import { PipelineRuntime } from '../aws/runtime.js';
import { pipelineStatus, type PipelineStatus } from '../runtime/status.js';
import { ensureBucket } from '../snapshot/s3-store.js';
import { ensureStateTable } from '../state/dynamodb-shard-store.js';
import { startDynamoDbEmulator, startS3Emulator, type Emulator } from './emulators.js';
import { EventSourceMapping } from './event-source-mapping.js';
import { InstanceLock } from './instance-lock.js';
import { offlineNames, offlineStateDir, writeRunningEndpoints } from './offline-state.js';
import { startLocalBroker, stopLocalBroker } from './kafka-broker.js';

/**
 * Settings of the topics offline mode creates: records are kept whatever their age, and their
 * timestamps may run ahead of the clock (a generator may run event time faster than it).
 */
const KEEP_RECORDS = { 'retention.ms': '-1', 'message.timestamp.after.max.ms': '9223372036854775807' } as const;

/**
 * A pipeline whose state has never checkpointed has committed nothing to its repartition
 * topics: committed records there come from another run's state (an older state folder, or
 * another instance of the pipeline). Its later stages would read them as their own input.
 */
async function refuseForeignRepartitionRecords(
  kafka: { brokers: string[] },
  admin: KafkaAdmin,
  repartitions: readonly { readonly topic: string }[],
  stateDir: string,
): Promise<void> {
  // Asked for no topics, a metadata request describes every topic of the cluster.
  if (repartitions.length === 0) return;
  const reader = new CommittedRangeReader(kafka);
  try {
    for (const description of await admin.describeTopics(repartitions.map(({ topic }) => topic))) {
      for (const { partition, low } of description.partitions) {
        const { records } = await reader.readAvailable(description.topic, partition, Number(low), 1);
        if (records.length === 0) continue;
        throw new Error(
          `The state in ${stateDir} is new, but the repartition topic ${description.topic} holds committed records of ` +
            `another run of this pipeline (partition ${partition} from offset ${records[0]?.offset ?? low}); its next stage ` +
            `would take them as its own input. Start with that run's --state-dir, or delete the topic (kafka-topics.sh ` +
            `--delete --topic ${description.topic}; for the local broker, npm run kafka:stop && rm -rf .sluice/kafka) ` +
            `so that this run makes it anew.`,
        );
      }
    }
  } finally {
    await reader.close();
  }
}

/**
 * What a pipeline file may export besides its environment, for `--generate`: the input record
 * number `index`, or a promise of it where making it needs a round trip first (a registry's
 * schema id, once).
 */
export type InputGenerator = (index: number) => OutputRecord | Promise<OutputRecord>;

export interface OfflineOptions {
  readonly pipeline: StreamExecutionEnvironment;
  /** Records per second to generate into the source topics, with the file's `generateInput`; 0: none. */
  readonly generateRate?: number;
  readonly generateInput?: InputGenerator;
  /** Print what the sinks' topics receive, read back with read_committed. */
  readonly printOutput?: boolean;
  readonly batchSize?: number;
  readonly batchWindowMs?: number;
  /** Replaces the pipeline's checkpoint interval (a short one makes output appear sooner). */
  readonly checkpointIntervalMs?: number;
  /** Partitions of the source topics offline mode creates. Default 4. */
  readonly partitions?: number;
  /** Where the emulators keep their data across runs. Default `.sluice/offline/<pipeline>`. */
  readonly stateDir?: string;
  /** Printed output and messages. */
  readonly out: (line: string) => void;
  /** The live status line, rewritten every second. */
  readonly status?: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** Over how long the status line's rates are taken: a batch comes every few seconds, and a one-second rate shows most seconds as 0. */
const RATE_WINDOW_MS = 10_000;

/** Records in and out: totals, and rates over the last {@link RATE_WINDOW_MS}. */
export class Throughput {
  private readonly samples: { at: number; in: number; out: number }[] = [];
  private readonly totals = { in: 0, out: 0 };
  private readonly started: number;

  constructor(private readonly clock: () => number = Date.now) {
    this.started = clock();
  }

  add(reports: readonly BatchReport[]): void {
    const sample = { at: this.clock(), in: 0, out: 0 };
    for (const report of reports) {
      sample.in += report.recordsIn;
      sample.out += report.recordsOut;
    }
    this.totals.in += sample.in;
    this.totals.out += sample.out;
    this.samples.push(sample);
  }

  now(): StatusRates {
    const now = this.clock();
    while (this.samples.length > 0 && (this.samples[0]?.at ?? now) <= now - RATE_WINDOW_MS) this.samples.shift();
    const seconds = Math.max(1, Math.min(RATE_WINDOW_MS, now - this.started)) / 1_000;
    const sum = (pick: (sample: { in: number; out: number }) => number) => this.samples.reduce((n, sample) => n + pick(sample), 0);
    return { in: sum((s) => s.in) / seconds, out: sum((s) => s.out) / seconds, totalIn: this.totals.in, totalOut: this.totals.out };
  }
}

export interface StatusRates {
  readonly in: number;
  readonly out: number;
  readonly totalIn: number;
  readonly totalOut: number;
}

export function formatStatusLine(status: PipelineStatus, rates: StatusRates): string {
  const lag = status.shards.map((s) => `${s.stageId === 'stage-1' ? '' : `${s.stageId}:`}p${s.partition} ${s.lag}`).join(' ');
  const pending = status.shards.reduce((n, s) => n + s.transactions.filter((t) => t.state === 'open').length, 0);
  const lost = status.shards.reduce((n, s) => n + s.transactions.filter((t) => t.state === 'lost').length, 0);
  const { triggered, completed, completedAt, committed } = status.checkpoints;
  const deleted = [...new Set(status.deletedOutput.map((d) => `${d.topic}/${d.partition}`))];
  const stopped = status.shards.flatMap((s) => (s.failure?.stopped ? [`${s.topic}/${s.partition}@${s.failure.offset}`] : []));
  const last =
    completed > 0
      ? `checkpoint ${completed} at ${new Date(completedAt).toISOString().slice(11, 19)} (triggered ${triggered}, committed ${committed})`
      : 'no checkpoint yet';
  return (
    `in ${rates.totalIn} (${Math.round(rates.in)}/s) · out ${rates.totalOut} (${Math.round(rates.out)}/s) · lag ${lag} · ${last} · ` +
    `pending transactions ${pending}${lost > 0 ? ` · LOST ${lost}` : ''}${status.resting ? ' · at rest' : ''}` +
    (stopped.length > 0 ? ` · STOPPED at failing ${stopped.join(', ')} (sluice status --offline says why; sluice resume --offline after the fix)` : '') +
    (deleted.length > 0 ? ` · COMMITTED OUTPUT DELETED from ${deleted.join(', ')} (sluice status --offline says more)` : '')
  );
}

/** Offline mode's coordinator schedule: its timer skips the runs while the pipeline rests. */
class OfflineSchedule implements CoordinatorSchedule {
  paused = false;

  pause(): Promise<void> {
    this.paused = true;
    return Promise.resolve();
  }

  resume(): Promise<void> {
    this.paused = false;
    return Promise.resolve();
  }
}

/**
 * Offline mode (`sluice offline`): the pipeline's own Lambda handlers on one machine, with the
 * local broker (or KAFKA_BROKERS), dynalite and s3rver embedded (their data kept under
 * `stateDir`, so a restart — even after SIGKILL — continues exactly once), MSK's event source
 * mapping emulated per stage, the coordinator on a timer and the commit function invoked by it.
 */
export class OfflineSession {
  /** What to close, in the order things started: stopped in reverse. */
  private readonly stops: (() => Promise<void>)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  private stopping: Promise<void> | undefined;
  private started: PipelineRuntime | undefined;
  private readonly schedule = new OfflineSchedule();
  /** How often each of the pipeline's functions has been invoked: none runs while the pipeline rests. */
  readonly invocations = { processor: 0, coordinator: 0, commit: 0 };

  private constructor(private readonly options: OfflineOptions) {}

  static async start(options: OfflineOptions): Promise<OfflineSession> {
    const session = new OfflineSession(options);
    try {
      await session.run();
    } catch (error) {
      await session.stop();
      throw error;
    }
    return session;
  }

  private async run(): Promise<void> {
    const { options } = this;
    // Before anything starts: a pipeline offline mode cannot feed fails with its own message.
    assertDeployable(planPipeline(options.pipeline));
    const env = options.env ?? process.env;
    const say = options.out;
    let brokers = brokersFromEnvironment(env);
    if (!brokers) {
      const broker = await startLocalBroker({ log: (line) => say(`[kafka] ${line}`) });
      brokers = broker.brokers;
      if (broker.started) {
        this.stops.push(async () => {
          await stopLocalBroker({ log: (line) => say(`[kafka] ${line}`) });
        });
      }
    }
    const kafka = { brokers };
    if (options.checkpointIntervalMs !== undefined) options.pipeline.enableCheckpointing(options.checkpointIntervalMs);
    const pipelineName = options.pipeline.name;
    const stateDir = offlineStateDir(pipelineName, options.stateDir);
    mkdirSync(join(stateDir, 'dynamodb'), { recursive: true });
    mkdirSync(join(stateDir, 's3'), { recursive: true });
    const admin = new KafkaAdmin(kafka);
    this.stops.push(() => admin.close());
    const lock = await InstanceLock.acquire({ pipeline: pipelineName, stateDir, kafka, admin });
    this.stops.push(() => lock.release());
    const dynamodb = await this.emulator(env.SLUICE_DYNAMODB_ENDPOINT, () => startDynamoDbEmulator(0, join(stateDir, 'dynamodb')));
    const s3 = await this.emulator(env.SLUICE_S3_ENDPOINT, () => startS3Emulator(join(stateDir, 's3')));

    const { tableName, snapshotBucket } = offlineNames(pipelineName);
    this.stops.push(writeRunningEndpoints(stateDir, { brokers, dynamodb, s3 }));
    await ensureStateTable(createDocumentClient(dynamodb), tableName);
    await ensureBucket(createS3Client(s3), snapshotBucket);
    // A batch that finds the pipeline resting turns the coordinator's timer on: its next run wakes it.
    const runtime = new PipelineRuntime(
      options.pipeline,
      { tableName, snapshotBucket, kafka, dynamodb, s3 },
      { schedule: this.schedule, callCoordinator: () => this.schedule.resume() },
    );
    this.stops.push(() => runtime.close());
    this.started = runtime;
    const { plan } = runtime;

    const partitions = options.partitions ?? 4;
    const existing = new Set(await admin.listTopics());
    const topics = planTopics(plan);
    const creating = [...topics.sources, ...topics.sinks, ...topics.deadLetters].filter((topic) => !existing.has(topic));
    await admin.ensureTopics([...creating.map((topic) => ({ topic, partitions, configs: KEEP_RECORDS })), ...topics.repartitions]);
    if ((await runtime.coordinator.get()).triggered === 0) await refuseForeignRepartitionRecords(kafka, admin, topics.repartitions, stateDir);
    say(`Sluice offline: pipeline ${pipelineName} on ${brokers.join(',')}; state in ${stateDir}`);
    if (creating.length > 0) {
      say(
        `Created ${creating.join(', ')} with ${Object.entries(KEEP_RECORDS).map(([name, value]) => `${name}=${value}`).join(' and ')}: ` +
          `they keep their records whatever their timestamps, as a backfill or a fast generator needs.`,
      );
    }

    const throughput = new Throughput();
    // The command line's batching, else the pipeline's (env.setEventSourceMapping), else Lambda's defaults.
    const { eventSourceMapping } = plan;
    const batchSize = options.batchSize ?? eventSourceMapping.batchSize;
    const windowSeconds = eventSourceMapping.maximumBatchingWindowSeconds;
    const batchWindowMs = options.batchWindowMs ?? (windowSeconds === undefined ? undefined : windowSeconds * 1000);
    for (const stage of plan.stages) {
      const handler = processorHandler(runtime, stage.id);
      const inputs = planTopics({ ...plan, stages: [stage] });
      for (const description of await admin.describeTopics([...inputs.sources, ...inputs.repartitions.map(({ topic }) => topic)])) {
        const mapping = new EventSourceMapping({
          kafka,
          topic: description.topic,
          partitions: description.partitions.map((p) => p.partition),
          groupId: consumerGroupOf(plan, stage),
          ...(batchSize === undefined ? {} : { batchSize }),
          ...(batchWindowMs === undefined ? {} : { batchWindowMs }),
          handler: (event) => {
            this.invocations.processor++;
            return handler(event);
          },
          onBatch: (_, __, result) => throughput.add((result as { batches: BatchReport[] }).batches),
          onError: (error, partition, attempt) =>
            say(`${stage.id} ${description.topic}/${partition}: attempt ${attempt} failed, retrying the batch: ${error instanceof Error ? error.message : String(error)}`),
        });
        await mapping.start();
        this.stops.push(() => mapping.stop());
      }
    }

    this.scheduleCoordinator(runtime, plan, throughput);
    if (options.generateRate && options.generateInput) await this.generate(kafka, topics.sources, admin, options.generateRate, options.generateInput);
    if (options.printOutput) await this.printOutput(kafka, topics.sinks, admin);
    if (options.status) {
      const status = options.status;
      let reporting = false;
      this.every(1_000, async () => {
        if (reporting) return;
        reporting = true;
        try {
          status(formatStatusLine(await pipelineStatus(runtime), throughput.now()));
        } finally {
          reporting = false;
        }
      });
    }
  }

  private async emulator(endpoint: string | undefined, start: () => Promise<Emulator>): Promise<AwsClientOptions> {
    if (endpoint) return { endpoint };
    const emulator = await start();
    this.stops.push(() => emulator.close());
    return emulator.clientOptions;
  }

  /** Runs `task` every `ms`, never twice at once; failures are reported and retried next time. */
  private every(ms: number, task: () => Promise<void>): void {
    this.repeat(ms, async () => {
      await task();
      return ms;
    });
  }

  /**
   * Runs `task` again when it says, and at most `ms` after it began, never twice at once;
   * failures are reported and retried `ms` after.
   */
  private repeat(ms: number, task: () => Promise<number>): void {
    const schedule = (delayMs: number) => {
      const timer = setTimeout(() => {
        this.timers.splice(this.timers.indexOf(timer), 1);
        run();
      }, delayMs);
      this.timers.push(timer);
    };
    const run = () => {
      if (this.stopping) return;
      const began = Date.now();
      const current = task().catch((error: unknown) => {
        this.options.out(`error: ${error instanceof Error ? error.message : String(error)}`);
        return ms;
      });
      const settled = current.then(() => undefined);
      this.running.add(settled);
      void current.then((delayMs) => {
        this.running.delete(settled);
        if (!this.stopping) schedule(Math.max(0, Math.min(began + ms, Date.now() + delayMs) - Date.now()));
      });
    };
    schedule(ms);
  }

  /** The coordinator on a schedule; its ticks invoke the processor, its commit the commit function (asynchronously, as on AWS). */
  private scheduleCoordinator(runtime: PipelineRuntime, plan: Plan, throughput: Throughput): void {
    let committing: Promise<unknown> = Promise.resolve();
    const commit = commitHandler(runtime);
    const periodMs = coordinatorPeriodMs(plan.checkpointing.intervalMs);
    const { invocations } = this;
    const coordinator = coordinatorHandler(
      runtime,
      async (target) => {
        invocations.processor++;
        // A tick may catch up on records and write what they produce: a later stage's output often comes this way.
        throughput.add((await processorHandler(runtime, target.stageId)({ sluice: 'tick', ...target })).batches);
      },
      () => {
        committing = committing
          .then(() => {
            invocations.commit++;
            return commit();
          })
          .catch((error: unknown) => this.options.out(`commit function failed: ${String(error)}`));
        return Promise.resolve();
      },
      Date.now,
      { tickAfterMs: periodMs },
    );
    this.repeat(periodMs, async () => {
      // At rest its schedule is off, as the deployed rule is: the first batch of input turns it on.
      if (this.schedule.paused) return periodMs;
      invocations.coordinator++;
      return (await coordinator()).nextRunInMs;
    });
    this.stops.push(() => committing.then(() => undefined));
  }

  /** Writes `rate` generated records a second, numbered on from what the source topics hold already. */
  private async generate(kafka: { brokers: string[] }, topics: readonly string[], admin: KafkaAdmin, rate: number, input: InputGenerator): Promise<void> {
    const held = await admin.describeTopics(topics);
    let index = held.reduce((sum, t) => sum + t.partitions.reduce((n, p) => n + Number(p.stable), 0), 0);
    const writer: RecordWriter = createRecordWriter('AT_LEAST_ONCE', kafka);
    this.stops.push(() => writer.close());
    const started = Date.now();
    const first = index;
    this.every(100, async () => {
      const due = first + Math.floor(((Date.now() - started) / 1_000) * rate);
      const records: OutputRecord[] = [];
      while (index < due) records.push(await input(index++));
      if (records.length > 0) await writer.write(records);
    });
  }

  /** Prints every record the sinks' topics receive from now on, as read_committed readers see it. */
  private async printOutput(kafka: { brokers: string[] }, topics: readonly string[], admin: KafkaAdmin): Promise<void> {
    const reader = new CommittedRangeReader(kafka);
    this.stops.push(() => reader.close());
    const positions = new Map<string, number>();
    for (const description of await admin.describeTopics(topics)) {
      for (const p of description.partitions) positions.set(`${description.topic}\u0000${p.partition}`, Number(p.stable));
    }
    this.every(500, async () => {
      for (const [id, from] of positions) {
        const [topic = '', partition = '0'] = id.split('\u0000');
        const { records, next } = await reader.readAvailable(topic, Number(partition), from, 1_000);
        positions.set(id, next);
        for (const record of records) this.options.out(`${topic}: ${record.value?.toString('utf8') ?? 'null'}`);
      }
    });
  }

  /** The pipeline's runtime (its plan, stores and request counts), once started. */
  get runtime(): PipelineRuntime {
    if (!this.started) throw new Error('The offline session has not started');
    return this.started;
  }

  /** Stops polling and timers, lets running batches finish, then closes everything it started. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const timer of this.timers) clearInterval(timer);
      await Promise.all(this.running);
      for (const stop of this.stops.reverse()) {
        await stop().catch((error: unknown) => this.options.out(`while stopping: ${String(error)}`));
      }
    })();
    return this.stopping;
  }
}
