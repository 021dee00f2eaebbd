import { DataStream } from './datastream.js';
import { KafkaSource } from './source.js';
import type { NewTransformation, Transformation } from './transformations.js';
import { WatermarkEmission, WatermarkStrategy } from './watermark.js';

/**
 * When an EXACTLY_ONCE sink's output becomes visible to read_committed consumers.
 *
 * - `ON_CHECKPOINT` (the default, Flink's): when the checkpoint that covers it commits, a
 *   checkpoint interval or so after it was written.
 * - `PER_BATCH` (Kafka Streams' shape): as soon as the invocation that wrote it has made its
 *   state and offset durable — the latency of a batch. Each invocation then ends its own
   *   transaction, in epoch order after its shard's earlier ones; checkpoints still make the
 *   snapshots that savepoints, restores and rollbacks use. A savepoint must then wait for a
 *   checkpoint that covers everything processed, since output past it is visible already:
 *   `sluice savepoint` and `sluice restore` refuse otherwise.
 */
export const OutputCommit = {
  ON_CHECKPOINT: 'on-checkpoint',
  PER_BATCH: 'per-batch',
} as const;

export type OutputCommit = (typeof OutputCommit)[keyof typeof OutputCommit];

/** Flink's checkpoint settings, with its names and defaults. */
/**
 * Flink's checkpointing modes. Sluice's checkpoints are always exactly once for state and
 * offsets: each shard snapshots its own state with its own offset, so there are no barriers to
 * align, and AT_LEAST_ONCE, which in Flink skips the alignment, changes nothing here. What
 * reaches Kafka is each sink's {@link DeliveryGuarantee}.
 */
export const CheckpointingMode = {
  EXACTLY_ONCE: 'EXACTLY_ONCE',
  AT_LEAST_ONCE: 'AT_LEAST_ONCE',
} as const;

export type CheckpointingMode = (typeof CheckpointingMode)[keyof typeof CheckpointingMode];

export class CheckpointConfig {
  /** `execution.checkpointing.interval`; 0 while checkpointing is off. */
  checkpointInterval = 0;
  /** `execution.checkpointing.timeout`: a checkpoint not complete by then is abandoned. */
  checkpointTimeout = 600_000;
  /** `execution.checkpointing.min-pause`: quiet time between the end of one checkpoint and the next. */
  minPauseBetweenCheckpoints = 0;
  /**
   * How long after a checkpoint completes its transactions may wait for their commit (the
   * commit function's schedule and retries). Part of the transaction-timeout check.
   */
  maxCommitDelay = 60_000;
  /** When EXACTLY_ONCE output becomes visible: at checkpoints (default) or per batch. */
  outputCommit: OutputCommit = OutputCommit.ON_CHECKPOINT;
  /** `execution.checkpointing.mode`: see {@link CheckpointingMode}. */
  checkpointingMode: CheckpointingMode = CheckpointingMode.EXACTLY_ONCE;

  /** Accepted as Flink's is; it changes nothing in Sluice ({@link CheckpointingMode}). */
  setCheckpointingMode(mode: CheckpointingMode): this {
    if (!Object.values(CheckpointingMode).includes(mode)) {
      throw new Error(`Checkpointing mode must be CheckpointingMode.EXACTLY_ONCE or CheckpointingMode.AT_LEAST_ONCE, not ${mode}`);
    }
    this.checkpointingMode = mode;
    return this;
  }

  getCheckpointingMode(): CheckpointingMode {
    return this.checkpointingMode;
  }

  setCheckpointTimeout(ms: number): this {
    this.checkpointTimeout = positiveDuration('Checkpoint timeout', ms);
    return this;
  }

  setMinPauseBetweenCheckpoints(ms: number): this {
    if (!Number.isInteger(ms) || ms < 0) throw new Error(`Min pause between checkpoints must be ≥ 0 ms, not ${ms}`);
    this.minPauseBetweenCheckpoints = ms;
    return this;
  }

  setMaxCommitDelay(ms: number): this {
    this.maxCommitDelay = positiveDuration('Max commit delay', ms);
    return this;
  }

  /** Commits each invocation's EXACTLY_ONCE transaction at once ({@link OutputCommit.PER_BATCH}), or at checkpoints. */
  setOutputCommit(mode: OutputCommit): this {
    if (!Object.values(OutputCommit).includes(mode)) {
      throw new Error(`Output commit must be OutputCommit.ON_CHECKPOINT or OutputCommit.PER_BATCH, not ${mode}`);
    }
    this.outputCommit = mode;
    return this;
  }

  isCheckpointingEnabled(): boolean {
    return this.checkpointInterval > 0;
  }
}

function positiveDuration(what: string, ms: number): number {
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`${what} must be a positive whole number of milliseconds, not ${ms}`);
  return ms;
}

/** What happens to a record whose deserialization or processing throws. */
export type BadRecordPolicy =
  | { readonly kind: 'fail'; readonly maxAttempts: number }
  | { readonly kind: 'skip' }
  | { readonly kind: 'dead-letter'; readonly topic: string };

export interface FailOptions {
  /**
   * How many times a shard tries a failing record before it stops there (default 10); Infinity
   * retries for as long as the trigger delivers. A stopped shard still acknowledges checkpoints
   * and keeps its position; `sluice resume` gives it its attempts again.
   */
  readonly maxAttempts?: number;
}

/** Attempts at a failing record before its shard stops, under {@link BadRecordPolicy.fail}. */
export const DEFAULT_MAX_ATTEMPTS = 10;

export const BadRecordPolicy = {
  /**
   * Stop at the record: its batch fails and is retried, as Flink fails and restarts the job
   * (the default). After `maxAttempts` the shard stops retrying and waits for `sluice resume`.
   */
  fail: ({ maxAttempts = DEFAULT_MAX_ATTEMPTS }: FailOptions = {}): BadRecordPolicy => {
    if (maxAttempts !== Infinity && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
      throw new Error(`BadRecordPolicy.fail's maxAttempts must be a whole number ≥ 1, or Infinity to retry without end; not ${maxAttempts}`);
    }
    return { kind: 'fail', maxAttempts };
  },
  /** Drop the record and count it in the `badRecordsSkipped` metric. */
  skip: (): BadRecordPolicy => ({ kind: 'skip' }),
  /** Write the original record to `topic`, with the error in its headers, and go on. */
  deadLetter: (topic: string): BadRecordPolicy => {
    if (topic.trim() === '') throw new Error('BadRecordPolicy.deadLetter needs a topic name');
    return { kind: 'dead-letter', topic };
  },
};

/**
 * How Lambda's event-source mapping hands each stage's records to its processor, for every
 * stage of the pipeline; offline mode's emulation follows it too. Unset fields keep the
 * deployment's parameters (`--param batchSize=...`) or offline mode's flags and defaults. Where
 * a source stage starts is its source's `setStartingOffsets`, not an option here.
 */
export interface EventSourceMappingOptions {
  /** Records per invocation, at most: 1 to 10,000. */
  readonly batchSize?: number;
  /** How long the mapping gathers records before it invokes with fewer than `batchSize`: 0 to 300 s. */
  readonly maximumBatchingWindowSeconds?: number;
  /**
   * Provisioned mode: event pollers kept ready for each trigger (each handles about 5 MB/s), for
   * a steady latency under bursts, billed while provisioned. Minimum 1 to 200; maximum up to
   * 1,000 (the serverless CLI's limit; Lambda's own is 2,000).
   */
  readonly provisionedPollers?: { readonly minimum: number; readonly maximum: number };
  /**
   * The longest an input record may wait, in seconds, before its output is visible: the
   * batching window is then the longest that keeps it, given the stages and whether output
   * waits for checkpoints, and batches grow with the rate up to 10,000 records
   * (`batchSize` caps them lower). Instead of `maximumBatchingWindowSeconds`; planning fails,
   * naming the fixes, when the pipeline cannot keep it with no window at all.
   */
  readonly latencyGoalSeconds?: number;
}

function validEventSourceMapping(options: EventSourceMappingOptions): EventSourceMappingOptions {
  const whole = (what: string, value: number | undefined, low: number, high: number) => {
    if (value !== undefined && (!Number.isInteger(value) || value < low || value > high)) {
      throw new Error(`env.setEventSourceMapping: ${what} must be a whole number from ${low} to ${high}, not ${value}`);
    }
  };
  whole('batchSize', options.batchSize, 1, 10_000);
  whole('maximumBatchingWindowSeconds', options.maximumBatchingWindowSeconds, 0, 300);
  const goal = options.latencyGoalSeconds;
  if (goal !== undefined) {
    if (!Number.isFinite(goal) || goal <= 0) throw new Error(`env.setEventSourceMapping: latencyGoalSeconds must be a number of seconds above 0, not ${goal}`);
    if (options.maximumBatchingWindowSeconds !== undefined) {
      throw new Error('env.setEventSourceMapping: set latencyGoalSeconds or maximumBatchingWindowSeconds, not both: the goal sets the window');
    }
  }
  const pollers = options.provisionedPollers;
  if (pollers) {
    whole('provisionedPollers.minimum', pollers.minimum, 1, 200);
    whole('provisionedPollers.maximum', pollers.maximum, 1, 1_000);
    if (pollers.minimum > pollers.maximum) {
      throw new Error(`env.setEventSourceMapping: provisionedPollers.minimum (${pollers.minimum}) exceeds its maximum (${pollers.maximum})`);
    }
  }
  return { ...options };
}

export interface EnvironmentOptions {
  /** Names the pipeline: its repartition topics, tables and functions derive from it. */
  readonly name: string;
}

/**
 * Where a pipeline is declared (Flink's `StreamExecutionEnvironment`). A pipeline file's
 * default export is its environment.
 */
/** Marks an environment whatever copy of Sluice built it, so that the CLI can tell another copy's from a wrong export. */
export const ENVIRONMENT_MARK = Symbol.for('sluice.StreamExecutionEnvironment');

export class StreamExecutionEnvironment {
  readonly name: string;
  private readonly [ENVIRONMENT_MARK] = true;
  private readonly transformations: Transformation[] = [];
  private readonly checkpointConfig = new CheckpointConfig();
  private parallelism = 4;
  private maxParallelism = 128;
  private badRecordPolicy: BadRecordPolicy = BadRecordPolicy.fail();
  private recordContentsInErrors = false;
  private maxEventTimeAheadMs: number | undefined;
  private eventSourceMapping: EventSourceMappingOptions = {};
  private watermarkEmission: WatermarkEmission = WatermarkEmission.perBatch();

  private constructor({ name }: EnvironmentOptions) {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) {
      throw new Error(
        `Pipeline name "${name}" must be 1-63 characters of lowercase letters, digits and dashes ` +
          `(it names topics, tables and functions), for example "order-aggregation"`,
      );
    }
    this.name = name;
  }

  static create(options: EnvironmentOptions): StreamExecutionEnvironment {
    return new StreamExecutionEnvironment(options);
  }

  /** Takes a checkpoint every `intervalMs`; exactly-once output is committed at each. */
  enableCheckpointing(intervalMs: number, mode?: CheckpointingMode): this {
    this.checkpointConfig.checkpointInterval = positiveDuration('Checkpoint interval', intervalMs);
    if (mode !== undefined) this.checkpointConfig.setCheckpointingMode(mode);
    return this;
  }

  getCheckpointConfig(): CheckpointConfig {
    return this.checkpointConfig;
  }

  /** Partitions of the repartition topics that a keyBy creates: the shards of later stages. */
  setParallelism(parallelism: number): this {
    if (!Number.isInteger(parallelism) || parallelism < 1) throw new Error(`Parallelism must be ≥ 1, not ${parallelism}`);
    this.parallelism = parallelism;
    return this;
  }

  getParallelism(): number {
    return this.parallelism;
  }

  /** Key groups of keyed state: the most shards a stage can ever be rescaled to. Fixed once state exists. */
  setMaxParallelism(maxParallelism: number): this {
    if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > 32_768) {
      throw new Error(`Max parallelism must be from 1 to 32768, not ${maxParallelism}`);
    }
    this.maxParallelism = maxParallelism;
    return this;
  }

  getMaxParallelism(): number {
    return this.maxParallelism;
  }

  setBadRecordPolicy(policy: BadRecordPolicy): this {
    this.badRecordPolicy = policy;
    return this;
  }

  getBadRecordPolicy(): BadRecordPolicy {
    return this.badRecordPolicy;
  }

  /**
   * Lets error messages, logs and the dead letter's `sluice.error` header quote records (a
   * parser's message, a selected key), for debugging. Off by default: record contents stay out
   * of logs, and the record itself stays only in the dead-letter topic.
   */
  setRecordContentsInErrors(include: boolean): this {
    this.recordContentsInErrors = include;
    return this;
  }

  getRecordContentsInErrors(): boolean {
    return this.recordContentsInErrors;
  }

  /**
   * Makes a record whose event time is more than `ms` ahead of processing time a bad record,
   * handled by the bad-record policy. A clock far off at a producer would otherwise move the
   * watermark ahead, and every on-time record after it would be late. Off by default, as in Flink.
   */
  setMaxEventTimeAhead(ms: number): this {
    this.maxEventTimeAheadMs = positiveDuration('The most an event time may be ahead of processing time', ms);
    return this;
  }

  getMaxEventTimeAhead(): number | undefined {
    return this.maxEventTimeAheadMs;
  }

  /**
   * Sets the event-source mapping of every stage's trigger: batch size, batching window and
   * provisioned pollers. Lambda's filter criteria are not offered: a processor reads back any
   * offsets its batch skips (that is how it stays exactly-once across cut batches), so a
   * filter would save nothing; filter in the pipeline (`.filter(...)`) instead.
   */
  setEventSourceMapping(options: EventSourceMappingOptions): this {
    this.eventSourceMapping = validEventSourceMapping(options);
    return this;
  }

  getEventSourceMapping(): EventSourceMappingOptions {
    return this.eventSourceMapping;
  }

  /**
   * When sources emit watermarks: after each batch (the default), or also every N offsets of a
   * partition (`WatermarkEmission.everyRecords(1)`: after every record, as a punctuated source
   * in Flink). More emission points fire windows sooner within a batch and cost a little CPU.
   */
  setWatermarkEmission(emission: WatermarkEmission): this {
    this.watermarkEmission = emission;
    return this;
  }

  getWatermarkEmission(): WatermarkEmission {
    return this.watermarkEmission;
  }

  /**
   * A bounded stream of `elements`, as Flink's `env.fromData`: for tests and examples, run with
   * `executeAndCollect` or a `PipelineTestHarness`. It cannot be deployed or run offline, which
   * read Kafka; give `watermarks` a timestamp assigner for event time.
   */
  fromData<T>(elements: readonly T[], watermarks: WatermarkStrategy<T> = WatermarkStrategy.noWatermarks<T>(), sourceName = 'data'): DataStream<T, number> {
    return this.fromSource(KafkaSource.ofData(`${this.name}-${sourceName}`, elements), watermarks, sourceName);
  }

  /** A stream of the source's records, each with its event time (the assigner's, or the Kafka record's timestamp). */
  fromSource<T>(source: KafkaSource<T>, watermarks: WatermarkStrategy<T>, sourceName: string): DataStream<T, number> {
    const transformation = this.addTransformation({
      kind: 'source',
      name: sourceName,
      inputs: [],
      source: source,
      watermarks: watermarks as WatermarkStrategy<unknown>,
    });
    transformation.nameIsExplicit = true;
    return new DataStream<T, number>(this, transformation);
  }

  /** @internal Every node of the pipeline, in the order the API calls made them. */
  getTransformations(): readonly Transformation[] {
    return this.transformations;
  }

  /** @internal */
  addTransformation<N extends NewTransformation>(node: N): Transformation & N {
    const transformation = { ...node, id: this.transformations.length + 1, nameIsExplicit: false } as Transformation & N;
    this.transformations.push(transformation);
    return transformation;
  }

  /** @internal */
  /** @internal What `explain` says an operator does, where its builder knows better than its kind: a SQL operator's plan. */
  describeTransformation(transformation: Transformation, description: string): void {
    if (transformation.kind === 'operator') (transformation as { description: string }).description = description;
  }

  renameTransformation(transformation: Transformation, name: string): void {
    if (name.trim() === '') throw new Error('An operator name must not be empty');
    transformation.name = name;
    transformation.nameIsExplicit = true;
  }
}
