import type { DataStream, SingleOutputStreamOperator } from '../api/datastream.js';
import { StreamExecutionEnvironment } from '../api/environment.js';
import type { OutputTag } from '../api/output-tag.js';
import { KafkaSink, type KafkaRecordSerializationSchema } from '../api/sink.js';
import { KafkaSource } from '../api/source.js';
import { MIN_WATERMARK } from '../api/time.js';
import { WatermarkStrategy } from '../api/watermark.js';
import type { KafkaRecord, OutputRecord, RecordHeader } from '../kafka/records.js';
import { planPipeline } from '../plan/planner.js';
import type { Plan } from '../plan/plan.js';
import { prepareFormats } from '../runtime/formats.js';
import { decodeRepartitionRecord, emissionSegments, StageExecutor, type StageOutputs } from '../runtime/stage-executor.js';
import { MemoryStateBackend } from '../state/keyed-state-backend.js';

/** A record to feed a harness, as a producer would write it. */
export interface TestRecord {
  readonly key?: string | Buffer | null;
  readonly value: string | Buffer | null;
  readonly partition?: number;
  /** Kafka record timestamp; the harness's processing time when absent. */
  readonly timestamp?: number;
  readonly headers?: readonly RecordHeader[];
}

export interface PipelineTestHarnessOptions {
  /** Processing time at the start. Default 0. */
  readonly startTime?: number;
  /** Partition counts of output topics, for custom partitioners. */
  readonly topicPartitions?: Readonly<Record<string, number>>;
  /** Source partitions per topic: a partition that sends nothing holds the watermark back until idle. */
  readonly sourcePartitions?: Readonly<Record<string, readonly number[]>>;
}

function bytes(value: string | Buffer | null | undefined): Buffer | null {
  return value === undefined || value === null ? null : typeof value === 'string' ? Buffer.from(value) : value;
}

/**
 * Runs a whole pipeline deterministically, with no broker and no clock (as Flink's test
 * harnesses do): feed records to its source topics, advance processing time, end the input,
 * and read what its sinks wrote, its state, timers and metrics. Every stage runs in this
 * process; repartition topics are passed along in memory, with their watermarks.
 */
export class PipelineTestHarness {
  readonly plan: Plan;
  readonly state = new MemoryStateBackend();
  private time: number;
  private readonly executors: StageExecutor[];
  private readonly offsets = new Map<string, number>();
  private readonly written = new Map<string, OutputRecord[]>();
  private readonly deadLetters: OutputRecord[] = [];

  constructor(env: StreamExecutionEnvironment, options: PipelineTestHarnessOptions = {}) {
    this.plan = planPipeline(env);
    this.time = options.startTime ?? 0;
    const partitionCount = (topic: string) => {
      const count = options.topicPartitions?.[topic];
      if (count === undefined) throw new Error(`Give the harness topicPartitions['${topic}'] for this custom partitioner`);
      return count;
    };
    this.executors = this.plan.stages.map(
      (stage) => new StageExecutor({ plan: this.plan, stage, state: this.state, clock: () => this.time, partitionCount }),
    );
    for (const executor of this.executors) {
      const { input } = executor.stage;
      if (input.kind !== 'source') continue;
      const partitions = (input.source.source.config.topics ?? []).flatMap((topic) => options.sourcePartitions?.[topic] ?? []);
      if (partitions.length > 0) executor.assignPartitions(partitions);
    }
  }

  /** Processing time now. */
  get processingTime(): number {
    return this.time;
  }

  /** Feeds records to every stage that reads `topic`, as one batch per partition in the order given. */
  send(topic: string, records: readonly TestRecord[]): this {
    const readers = this.readersOf(topic);
    return this.process(readers, records.map((record) => this.toKafkaRecord(topic, record)));
  }

  /**
   * {@link send}, for pipelines whose formats fetch what they need first (the registry formats
   * of lib/formats): as the runtime does before a batch, the reading stages' deserializers
   * prepare for the records, and every sink's serializer opens.
   */
  async sendAsync(topic: string, records: readonly TestRecord[]): Promise<this> {
    const readers = this.readersOf(topic);
    const kafkaRecords = records.map((record) => this.toKafkaRecord(topic, record));
    await Promise.all(this.executors.flatMap((executor) => prepareFormats(executor.stage, readers.includes(executor) ? kafkaRecords : []) ?? []));
    return this.process(readers, kafkaRecords);
  }

  private readersOf(topic: string): StageExecutor[] {
    const readers = this.executors.filter(({ stage: { input } }) => input.kind === 'source' && this.reads(input.source.source.config, topic));
    if (readers.length === 0) throw new Error(`No source of this pipeline reads topic "${topic}"`);
    return readers;
  }

  private process(readers: readonly StageExecutor[], kafkaRecords: readonly KafkaRecord[]): this {
    for (const executor of readers) {
      for (const segment of emissionSegments(kafkaRecords, this.plan.watermarkEmission, executor.stage)) executor.processRecords(segment);
      this.collect(executor);
    }
    return this;
  }

  private reads(config: { topics: readonly string[] | undefined; topicPattern: RegExp | undefined }, topic: string): boolean {
    return config.topics ? config.topics.includes(topic) : (config.topicPattern?.test(topic) ?? false);
  }

  private toKafkaRecord(topic: string, record: TestRecord): KafkaRecord {
    const partition = record.partition ?? 0;
    const position = `${topic}\u0000${partition}`;
    const offset = this.offsets.get(position) ?? 0;
    this.offsets.set(position, offset + 1);
    return {
      topic,
      partition,
      offset,
      timestamp: record.timestamp ?? this.time,
      timestampType: 'CREATE_TIME',
      key: bytes(record.key),
      value: bytes(record.value),
      headers: record.headers ?? [],
    };
  }

  /** Moves processing time forward, firing processing-time timers and idleness. */
  advanceProcessingTime(ms: number): this {
    if (ms < 0) throw new Error('Processing time only moves forward');
    this.time += ms;
    for (const executor of this.executors) {
      executor.advanceProcessingTime();
      this.collect(executor);
    }
    return this;
  }

  /** Advances event time at every source stage, as if all its partitions had reached `watermark`. */
  processWatermark(watermark: number): this {
    for (const executor of this.executors) {
      if (executor.stage.input.kind !== 'source') continue;
      executor.processWatermark(watermark);
      this.collect(executor);
    }
    return this;
  }

  /** Ends the input, as a bounded source does: the final watermark fires every event-time window and timer. */
  finish(): this {
    for (const executor of this.executors) {
      if (executor.stage.input.kind !== 'source') continue;
      executor.finish();
      this.collect(executor);
    }
    return this;
  }

  /** Routes a stage's repartition output into the stages that read it, recursively. */
  private collect(executor: StageExecutor): void {
    const outputs: StageOutputs = executor.drainOutputs();
    for (const [sink, records] of outputs.sinks) this.written.set(sink, [...(this.written.get(sink) ?? []), ...records]);
    this.deadLetters.push(...outputs.deadLetters);
    for (const downstream of this.executors) {
      const { input } = downstream.stage;
      if (input.kind !== 'repartition') continue;
      const records = outputs.repartitions.filter((record) => record.topic === input.topic);
      if (records.length > 0) {
        downstream.processRecords(
          records.map(({ key, value, timestamp, headers }) =>
            this.toKafkaRecord(input.topic, { key: key ?? null, value, timestamp, headers: (headers ?? []).map((h) => ({ key: h.key, value: bytes(h.value) })) }),
          ),
        );
      }
      const watermark = outputs.repartitionWatermarks.get(input.topic);
      if (watermark !== undefined) this.forwardWatermark(downstream, input.upstream, input.topic, watermark);
      if (records.length > 0 || watermark !== undefined) this.collect(downstream);
    }
  }

  private readonly upstreamWatermarks = new Map<string, Map<StageExecutor, number>>();

  /** A repartition stage's watermark is the minimum over the stages that write to it. */
  private forwardWatermark(downstream: StageExecutor, upstream: readonly string[], topic: string, watermark: number): void {
    const writers = this.executors.filter((e) => upstream.includes(e.stage.id));
    const seen = this.upstreamWatermarks.get(topic) ?? new Map<StageExecutor, number>();
    this.upstreamWatermarks.set(topic, seen);
    for (const writer of writers) {
      if (writer.currentWatermark() >= watermark || !seen.has(writer)) seen.set(writer, Math.max(seen.get(writer) ?? MIN_WATERMARK, Math.min(writer.currentWatermark(), watermark)));
    }
    const combined = Math.min(...writers.map((writer) => seen.get(writer) ?? MIN_WATERMARK));
    downstream.processWatermark(combined);
  }

  /** What a sink wrote, by sink name (or by topic when no sink has that name). */
  output(sinkOrTopic: string): OutputRecord[] {
    const bySink = this.written.get(sinkOrTopic);
    if (bySink) return [...bySink];
    return [...this.written.values()].flat().filter((record) => record.topic === sinkOrTopic);
  }

  /** The values a sink wrote, as UTF-8 text. */
  outputValues(sinkOrTopic: string): string[] {
    return this.output(sinkOrTopic).map((record) => (record.value === null ? '' : record.value.toString()));
  }

  deadLetterRecords(): OutputRecord[] {
    return [...this.deadLetters];
  }

  /** Every (key, value) of an operator's state, keys as their JSON text. */
  stateOf(operatorName: string, stateName: string): Map<string, unknown> {
    return new Map(this.state.entries(`${operatorName}/${stateName}`));
  }

  timers(operatorName: string): { eventTime: number[]; processingTime: number[] } {
    for (const executor of this.executors) {
      if (executor.stage.nodes.some((node) => node.name === operatorName)) return executor.timers(operatorName);
    }
    throw new Error(`No operator is named "${operatorName}"`);
  }

  /** Metrics summed over the stages. */
  metrics(): Record<string, number> {
    const total: Record<string, number> = {};
    for (const executor of this.executors) {
      for (const [name, value] of Object.entries(executor.getMetrics())) total[name] = (total[name] ?? 0) + value;
    }
    return total;
  }
}

/** An element for {@link OperatorTestHarness}: a value and its event time. */
export interface TimestampedValue<T> {
  readonly value: T;
  readonly timestamp: number | undefined;
}

const HARNESS_TOPIC = 'harness-input';
const HARNESS_SERVERS = '127.0.0.1:9092';

/**
 * Feeds elements and watermarks straight to the operators a function builds on a stream,
 * and captures their output and side outputs — Flink's operator test harness. Watermarks
 * move only when `processWatermark` says so.
 *
 * ```ts
 * const harness = OperatorTestHarness.of<Order, Order>((orders) =>
 *   orders.keyBy((o) => o.category).window(TumblingEventTimeWindows.of(minutes(5))).sum('amount'));
 * harness.processElement(order, order.timestamp).processWatermark(minutes(5));
 * harness.output(); // [{ value: {...}, timestamp: 299_999 }]
 * ```
 */
export class OperatorTestHarness<IN, OUT> {
  private readonly harness: PipelineTestHarness;
  private readonly captured: TimestampedValue<OUT>[] = [];
  private readonly sides = new Map<string, TimestampedValue<unknown>[]>();

  private constructor(
    build: (input: DataStream<IN>) => SingleOutputStreamOperator<OUT> | DataStream<OUT>,
    sideOutputs: readonly OutputTag<unknown>[],
    options: PipelineTestHarnessOptions,
  ) {
    const env = StreamExecutionEnvironment.create({ name: 'operator-test' });
    const source = KafkaSource.builder<TimestampedValue<IN>>()
      .setBootstrapServers(HARNESS_SERVERS)
      .setTopics(HARNESS_TOPIC)
      .setGroupId('operator-test')
      .setDeserializer({ deserialize: (record) => decodeRepartitionRecord(record) as TimestampedValue<IN> })
      .build();
    const manual = WatermarkStrategy.forGenerator<TimestampedValue<IN>>(
      () => ({ onEvent: () => undefined, onPeriodicEmit: () => undefined }),
      'watermarks from the test',
    ).withTimestampAssigner((element) => element.timestamp ?? MIN_WATERMARK);
    const input = env.fromSource(source, manual, 'harness-source').map((element) => element.value).name('harness-unwrap');
    const result = build(input);
    result.sinkTo(captureSink(this.captured)).name('harness-output');
    if (sideOutputs.length > 0 && !('getSideOutput' in result)) {
      throw new Error('Side outputs come from an operator: the function must return the operator that emits them');
    }
    for (const tag of sideOutputs) {
      const list: TimestampedValue<unknown>[] = [];
      this.sides.set(tag.id, list);
      (result as SingleOutputStreamOperator<OUT>).getSideOutput(tag).sinkTo(captureSink(list)).name(`harness-side-${tag.id}`);
    }
    this.harness = new PipelineTestHarness(env, options);
  }

  static of<IN, OUT>(
    build: (input: DataStream<IN>) => SingleOutputStreamOperator<OUT> | DataStream<OUT>,
    { sideOutputs = [], ...options }: PipelineTestHarnessOptions & { sideOutputs?: readonly OutputTag<unknown>[] } = {},
  ): OperatorTestHarness<IN, OUT> {
    return new OperatorTestHarness(build, sideOutputs, options);
  }

  processElement(value: IN, timestamp?: number): this {
    return this.processElements([{ value, timestamp }]);
  }

  processElements(elements: readonly TimestampedValue<IN>[]): this {
    this.harness.send(
      HARNESS_TOPIC,
      elements.map(({ value, timestamp }) => ({ value: JSON.stringify({ v: value, t: timestamp ?? null }) })),
    );
    return this;
  }

  processWatermark(watermark: number): this {
    this.harness.processWatermark(watermark);
    return this;
  }

  advanceProcessingTime(ms: number): this {
    this.harness.advanceProcessingTime(ms);
    return this;
  }

  output(): TimestampedValue<OUT>[] {
    return [...this.captured];
  }

  /** The values emitted so far, without timestamps. */
  outputValues(): OUT[] {
    return this.captured.map(({ value }) => value);
  }

  sideOutput<X>(tag: OutputTag<X>): TimestampedValue<X>[] {
    const list = this.sides.get(tag.id);
    if (!list) throw new Error(`Side output "${tag.id}" was not registered: pass it in sideOutputs`);
    return [...(list as TimestampedValue<X>[])];
  }

  stateOf(operatorName: string, stateName: string): Map<string, unknown> {
    return this.harness.stateOf(operatorName, stateName);
  }

  timers(operatorName: string) {
    return this.harness.timers(operatorName);
  }

  metrics(): Record<string, number> {
    return this.harness.metrics();
  }
}

function captureSink<T>(into: TimestampedValue<T>[]): KafkaSink<T> {
  const serializer: KafkaRecordSerializationSchema<T> = {
    topic: 'harness-output',
    serialize(element, { timestamp }) {
      into.push({ value: element, timestamp });
      return { topic: 'harness-output', value: null };
    },
  };
  return KafkaSink.builder<T>().setBootstrapServers(HARNESS_SERVERS).setRecordSerializer(serializer).build();
}

let collected = 0;

/**
 * Runs the pipeline of `stream` in a {@link PipelineTestHarness} over its `env.fromData`
 * sources to their end, and returns what reached `stream`, as Flink's
 * `DataStream.executeAndCollect()`. Each call adds a collecting sink to the pipeline.
 */
export function executeAndCollect<T>(stream: DataStream<T>, options: PipelineTestHarnessOptions = {}): T[] {
  const captured: TimestampedValue<T>[] = [];
  stream.sinkTo(captureSink(captured)).name(`collect-${++collected}`);
  const harness = new PipelineTestHarness(stream.getExecutionEnvironment(), options);
  for (const stage of harness.plan.stages) {
    if (stage.input.kind !== 'source') continue;
    const { topics, boundedData } = stage.input.source.source.config;
    const [topic] = topics ?? [];
    if (!boundedData || topic === undefined) {
      throw new Error(`executeAndCollect runs pipelines of env.fromData sources; "${stage.input.source.name}" reads Kafka: send its records with a PipelineTestHarness`);
    }
    harness.send(topic, boundedData.map(() => ({ value: null })));
  }
  harness.finish();
  return captured.map(({ value }) => value);
}
