import type { OutputTag } from '../api/output-tag.js';
import { parseJson, RedactableError } from '../api/record-contents.js';
import type { KafkaSink } from '../api/sink.js';
import { BROADCAST_KEY } from '../api/transformations.js';
import { MAX_WATERMARK, MIN_WATERMARK } from '../api/time.js';
import type { WatermarkEmission, WatermarkGenerator, WatermarkOutput, WatermarkStrategy } from '../api/watermark.js';
import type { KafkaRecord, OutputRecord } from '../kafka/records.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../kafka/records.js';
import { KeyByOperator } from '../operators/basic-operators.js';
import { StreamOperator, UserFunctionError, type Metrics, type OperatorServices, type Output, type StreamRecord } from '../operators/operator.js';
import { TimerQueue } from '../operators/timers.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { keyAsRecordKey, keyRef, type KeyRef } from '../state/keys.js';
import type { Plan, PlanNode, Stage } from '../plan/plan.js';
import { timestampAssigners } from '../plan/planner.js';
import { bytesOverLimit, RecordTooLargeError } from './output-limits.js';

/** A record failed and the bad-record policy is `fail`; names the record and what to do. */
export class BadRecordError extends Error {
  override readonly name = 'BadRecordError';
  /** The record's position only: an error that kept its key and value would carry them into whatever logs it whole. */
  readonly record: Pick<KafkaRecord, 'topic' | 'partition' | 'offset'>;

  /** `reason` is the failure as logs may show it; `cause` is given only when record contents may be shown. */
  constructor(
    { topic, partition, offset }: Pick<KafkaRecord, 'topic' | 'partition' | 'offset'>,
    readonly operatorName: string,
    reason: string,
    cause?: unknown,
  ) {
    super(
      `Record ${topic}/${partition}@${offset}: ${operatorName} failed: ${reason}. Fix the record or the function, or set ` +
        `env.setBadRecordPolicy(BadRecordPolicy.skip()) or BadRecordPolicy.deadLetter('topic') to go on without it.`,
      cause === undefined ? undefined : { cause },
    );
    this.record = { topic, partition, offset };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Shorter texts are too common to be taken for a record's contents. */
const MIN_REDACTED_LENGTH = 4;

/**
 * What went wrong with a record, for logs and the dead letter's header. Unless the pipeline
 * allows record contents there, a {@link RedactableError} gives only its message, and any other
 * error's message has the record's key and value texts taken out where they appear whole.
 */
function describeRecordFailure(error: unknown, record: Pick<KafkaRecord, 'key' | 'value'>, includeContents: boolean): string {
  const inner = error instanceof UserFunctionError ? error.cause : error;
  const text = describe(inner);
  if (inner instanceof RedactableError) return includeContents ? `${text}: ${inner.detail}` : text;
  if (includeContents) return text;
  let redacted = text;
  for (const [part, bytes] of [['value', record.value], ['key', record.key]] as const) {
    const contents = bytes?.toString('utf8');
    if (contents !== undefined && contents.length >= MIN_REDACTED_LENGTH) redacted = redacted.split(contents).join(`<the record's ${part}>`);
  }
  return redacted;
}

/** What one stage produced since the outputs were last drained. */
export interface StageOutputs {
  /** Serialized records per sink, by sink name. */
  readonly sinks: Map<string, OutputRecord[]>;
  /** Records for repartition topics: the input of later stages. */
  readonly repartitions: OutputRecord[];
  /** The latest watermark sent into each repartition topic. */
  readonly repartitionWatermarks: Map<string, number>;
  readonly deadLetters: OutputRecord[];
}

export interface StageExecutorOptions {
  readonly plan: Plan;
  readonly stage: Stage;
  readonly state: KeyedStateBackend;
  /** Processing time. */
  readonly clock: () => number;
  /** Partition counts of output topics, for custom sink partitioners. */
  readonly partitionCount?: (topic: string) => number;
  /** The largest record each output topic takes (its max.message.bytes); default Kafka's default. */
  readonly maxRecordBytes?: (topic: string) => number;
  /** Where an earlier executor of the same shard left off (see {@link StageExecutor.snapshot}). */
  readonly snapshot?: ExecutorSnapshot;
}

/** A timer as data: which operator, which time domain, for which key and why. */
export interface TimerSnapshot {
  readonly operator: string;
  readonly domain: 'event' | 'processing';
  readonly key: KeyRef;
  readonly timestamp: number;
  readonly namespace: string;
}

/**
 * Everything an executor holds besides keyed state, as JSON: the stage's watermark, each
 * source partition's watermark generator, and the pending timers. The serverless runtime
 * stores it with the shard's progress and restores it in the next invocation.
 */
export interface ExecutorSnapshot {
  readonly watermark: number;
  readonly partitions: readonly {
    readonly partition: number;
    readonly generator: unknown;
    readonly lastActive: number;
    /** Absent in snapshots written before generators emitted through an output. */
    readonly emitted?: number;
    readonly markedIdle?: boolean;
    /** The source's deserializer ended the partition's stream (`isEndOfStream`). */
    readonly ended?: boolean;
  }[];
  readonly timers: readonly TimerSnapshot[];
}

/** The earliest event-time timer an executor holds, if any. */
export function earliestEventTimer(snapshot: ExecutorSnapshot | null | undefined): number | undefined {
  let earliest: number | undefined;
  for (const timer of snapshot?.timers ?? []) if (timer.domain === 'event' && (earliest === undefined || timer.timestamp < earliest)) earliest = timer.timestamp;
  return earliest;
}

/**
 * A batch cut at its watermark emission points (`env.setWatermarkEmission`): after each record
 * whose offset + 1 is a multiple of the emission's count, and at the batch's end. Each segment
 * is processed, then the source's watermark emitted, before the next.
 */
export function emissionSegments(records: readonly KafkaRecord[], emission: WatermarkEmission, stage: Stage): KafkaRecord[][] {
  if (emission.kind === 'per-batch' || stage.input.kind !== 'source') return [[...records]];
  const segments: KafkaRecord[][] = [[]];
  for (const record of records) {
    segments.at(-1)?.push(record);
    if ((record.offset + 1) % emission.records === 0) segments.push([]);
  }
  return segments;
}

/** Header names on dead-letter records and repartition records. */
export const Headers = {
  error: 'sluice.error',
  operator: 'sluice.error.operator',
  topic: 'sluice.source.topic',
  partition: 'sluice.source.partition',
  offset: 'sluice.source.offset',
  /** On a dead letter of a later stage: the repartition record that failed, as its stage read it. */
  repartitionTopic: 'sluice.repartition.topic',
  repartitionPartition: 'sluice.repartition.partition',
  repartitionOffset: 'sluice.repartition.offset',
} as const;

const SOURCE_HEADERS: ReadonlySet<string> = new Set([Headers.topic, Headers.partition, Headers.offset]);

/**
 * Where the source record behind `record` was read: its own position for a source record, the
 * position it carries for a repartition record written with one (see `writeToRepartition`).
 */
function sourcePosition(record: KafkaRecord): { key: string; value: Buffer | string }[] {
  const carried = record.headers.filter((h): h is { key: string; value: Buffer } => SOURCE_HEADERS.has(h.key) && h.value !== null);
  if (carried.length === SOURCE_HEADERS.size) return carried.map(({ key, value }) => ({ key, value }));
  return [
    { key: Headers.topic, value: record.topic },
    { key: Headers.partition, value: String(record.partition) },
    { key: Headers.offset, value: String(record.offset) },
  ];
}

interface RepartitionValue {
  readonly v: unknown;
  readonly t: number | null;
}

/** Turns a repartition record back into the element that was written. */
export function decodeRepartitionRecord(record: KafkaRecord): StreamRecord {
  const decoded = parseJson(record.value?.toString('utf8') ?? 'null', 'the repartition record') as RepartitionValue | null;
  if (!decoded || !('v' in decoded)) throw new Error('not a Sluice repartition record');
  return { value: decoded.v, timestamp: decoded.t ?? undefined };
}

export function emptyStageOutputs(): StageOutputs {
  return { sinks: new Map(), repartitions: [], repartitionWatermarks: new Map(), deadLetters: [] };
}

/** A node of the running stage: receives elements and watermarks on numbered input edges. */
interface RuntimeNode {
  readonly node: PlanNode;
  readonly operator: StreamOperator | undefined;
  readonly edgeWatermarks: number[];
  watermark: number;
  readonly mainChildren: { target: RuntimeNode; edge: number }[];
  readonly sideChildren: Map<string, { target: RuntimeNode; edge: number }[]>;
  /** Where the node's records and watermarks go: built once, since every record passes through it. */
  readonly output: Output;
}

interface PartitionProgress {
  readonly generator: WatermarkGenerator;
  readonly output: WatermarkOutput;
  lastActive: number;
  /** The highest watermark the generator emitted. */
  emitted: number;
  /** The generator marked the partition idle (`WatermarkOutput.markIdle`). */
  markedIdle: boolean;
  /**
   * The deserializer's `isEndOfStream` ended the partition, as a Flink split finishes: its
   * later records are read past, and its watermark is the highest, holding nothing back.
   */
  ended: boolean;
}

/**
 * Runs one stage's operators for one shard: input records in, serialized output records and
 * watermarks out, keyed state through a {@link KeyedStateBackend}. Deterministic: processing
 * time comes from the clock it is given. Not tied to Lambda or any broker: the runtime and the
 * test harness both drive it.
 */
export class StageExecutor {
  private readonly nodes = new Map<number, RuntimeNode>();
  private readonly order: RuntimeNode[] = [];
  private readonly partitions = new Map<number, PartitionProgress>();
  private readonly metrics: Metrics = {};
  private sourceWatermark = MIN_WATERMARK;
  private currentKey: KeyRef | undefined;
  private currentRecord: KafkaRecord | undefined;
  private currentOperator = '';
  private outputs = emptyStageOutputs();
  private readonly timerQueues = new Map<string, { event: TimerQueue; processing: TimerQueue }>();
  /**
   * Where a source stage's event time comes from: its `assignTimestampsAndWatermarks`, whose
   * generators see the elements it stamps, or else the source's own strategy.
   */
  private readonly watermarks: WatermarkStrategy<unknown> | undefined;
  private readonly assignsTimestamps: boolean;

  constructor(private readonly options: StageExecutorOptions) {
    const [assigner] = timestampAssigners(options.stage);
    const input = options.stage.input;
    this.assignsTimestamps = assigner !== undefined;
    this.watermarks =
      assigner?.role === 'operator' ? assigner.transformation.watermarks : input.kind === 'source' ? input.source.watermarks : undefined;
    for (const node of options.stage.nodes) this.addNode(node);
    for (const runtime of this.order) runtime.operator?.open();
    if (options.snapshot) this.restore(options.snapshot);
  }

  private restore(snapshot: ExecutorSnapshot): void {
    for (const timer of snapshot.timers) {
      const queues = this.timerQueues.get(timer.operator);
      if (!queues) throw new Error(`The snapshot has timers of "${timer.operator}", which ${this.stage.id} does not have`);
      (timer.domain === 'event' ? queues.event : queues.processing).register(timer);
    }
    const input = this.inputNode().node;
    if (input.role === 'source') {
      for (const { partition, generator, lastActive, emitted, markedIdle, ended } of snapshot.partitions) {
        const progress = this.partition(partition);
        progress.generator.restoreState?.(generator);
        progress.lastActive = lastActive;
        progress.emitted = emitted ?? MIN_WATERMARK;
        progress.markedIdle = markedIdle ?? false;
        progress.ended = ended ?? false;
      }
    }
    this.processWatermark(snapshot.watermark);
  }

  /** See {@link ExecutorSnapshot}. */
  snapshot(): ExecutorSnapshot {
    const timers: TimerSnapshot[] = [];
    for (const [operator, queues] of this.timerQueues) {
      for (const timer of queues.event.all()) timers.push({ operator, domain: 'event', ...timer });
      for (const timer of queues.processing.all()) timers.push({ operator, domain: 'processing', ...timer });
    }
    return {
      watermark: this.sourceWatermark,
      partitions: [...this.partitions].map(([partition, { generator, lastActive, emitted, markedIdle, ended }]) => ({
        partition,
        generator: generator.snapshotState?.(),
        lastActive,
        emitted,
        markedIdle,
        ...(ended ? { ended } : {}),
      })),
      timers,
    };
  }

  /** Keys of the timers that are due at `watermark` (event time) or at the clock's time (processing time). */
  dueTimerKeys(watermark: number): KeyRef[] {
    const now = this.options.clock();
    const keys = new Map<string, KeyRef>();
    for (const queues of this.timerQueues.values()) {
      for (const timer of queues.event.all()) if (timer.timestamp <= watermark) keys.set(timer.key.serialized, timer.key);
      for (const timer of queues.processing.all()) if (timer.timestamp <= now) keys.set(timer.key.serialized, timer.key);
    }
    return [...keys.values()];
  }

  get stage(): Stage {
    return this.options.stage;
  }

  private addNode(node: PlanNode): void {
    const operator = this.createOperator(node);
    const children: Pick<RuntimeNode, 'mainChildren' | 'sideChildren'> = { mainChildren: [], sideChildren: new Map() };
    const runtime: RuntimeNode = {
      node,
      operator,
      edgeWatermarks: node.inputs.map(() => MIN_WATERMARK),
      watermark: MIN_WATERMARK,
      ...children,
      output: this.outputTo(children),
    };
    node.inputs.forEach((edge, index) => {
      const parent = this.nodes.get(edge.from);
      if (!parent) throw new Error(`Plan error: ${node.name} reads from node ${edge.from}, which is not in ${this.stage.id}`);
      if (edge.sideOutput === undefined) parent.mainChildren.push({ target: runtime, edge: index });
      else {
        const list = parent.sideChildren.get(edge.sideOutput) ?? [];
        parent.sideChildren.set(edge.sideOutput, list);
        list.push({ target: runtime, edge: index });
      }
    });
    if (operator) operator.setup(this.services(node), runtime.output);
    this.nodes.set(node.id, runtime);
    this.order.push(runtime);
  }

  private createOperator(node: PlanNode): StreamOperator | undefined {
    switch (node.role) {
      case 'operator':
        return node.transformation.factory();
      case 'keyBy':
        return new KeyByOperator(
          node.transformation.keySelector,
          this.options.plan.maxParallelism,
          node.inPlace ? (key) => this.checkInPlaceKey(node, key) : undefined,
        );
      default:
        return undefined;
    }
  }

  private checkInPlaceKey(node: PlanNode, key: KeyRef): void {
    const record = this.currentRecord;
    if (!record) return;
    const recordKey = record.key?.toString('utf8');
    if (recordKey !== keyAsRecordKey(key)) {
      throw new RedactableError(
        `the key it selected is not the record's Kafka key${recordKey === undefined ? ' (null)' : ''}; ` +
          `the source is declared setPartitionedByRecordKey(), so its producers must key each record by this key ` +
          `(or remove setPartitionedByRecordKey() to repartition)`,
        `selected key ${key.serialized}, Kafka key ${recordKey === undefined ? 'null' : JSON.stringify(recordKey)}`,
      );
    }
  }

  private services(node: PlanNode): OperatorServices {
    const queues = { event: new TimerQueue(), processing: new TimerQueue() };
    this.timerQueues.set(node.name, queues);
    return {
      operatorName: node.name,
      state: this.options.state,
      eventTimers: queues.event,
      processingTimers: queues.processing,
      metrics: this.metrics,
      processingTime: () => this.options.clock(),
      onEventTime: (value, timestamp) => {
        const record = this.currentRecord;
        if (!record) return;
        const progress = this.partition(record.partition);
        progress.generator.onEvent(value, timestamp, progress.output);
      },
      currentKey: () => {
        if (!this.currentKey) throw new Error(`${node.name} used keyed state or timers outside a keyed stream: call keyBy(...) first`);
        return this.currentKey;
      },
      setCurrentKey: (key) => {
        this.currentKey = key;
      },
    };
  }

  private outputTo({ mainChildren, sideChildren }: Pick<RuntimeNode, 'mainChildren' | 'sideChildren'>): Output {
    return {
      collect: (record) => {
        for (const { target } of mainChildren) this.deliver(target, record);
      },
      emitWatermark: (watermark) => {
        for (const { target, edge } of mainChildren) this.deliverWatermark(target, edge, watermark);
        for (const children of sideChildren.values()) {
          for (const { target, edge } of children) this.deliverWatermark(target, edge, watermark);
        }
      },
      side: (tag: OutputTag<unknown>, record) => {
        for (const { target } of sideChildren.get(tag.id) ?? []) this.deliver(target, record);
      },
    };
  }

  private deliver(runtime: RuntimeNode, record: StreamRecord): void {
    const { node, operator } = runtime;
    this.currentOperator = node.name;
    if (operator) {
      if (node.role === 'operator' && node.transformation.keyed) {
        if (!record.key) throw new Error(`${node.name} is keyed but got an element without a key`);
        this.currentKey = record.key;
      }
      operator.processElement(record);
      return;
    }
    switch (node.role) {
      case 'sink':
        this.writeToSink(node.name, node.transformation.sink, record);
        return;
      case 'repartition':
        this.writeToRepartition(node, record);
        return;
      default:
        runtime.output.collect(record);
    }
  }

  private deliverWatermark(runtime: RuntimeNode, edge: number, watermark: number): void {
    runtime.edgeWatermarks[edge] = watermark;
    const combined = Math.min(...runtime.edgeWatermarks);
    if (combined <= runtime.watermark) return;
    runtime.watermark = combined;
    const { node, operator } = runtime;
    if (operator) operator.processWatermark(combined);
    else if (node.role === 'repartition') this.outputs.repartitionWatermarks.set(node.topic, combined);
    else if (node.role !== 'sink') runtime.output.emitWatermark(combined);
  }

  private writeToSink(name: string, sink: KafkaSink<unknown>, record: StreamRecord): void {
    const partitionCount =
      this.options.partitionCount ??
      ((topic: string) => {
        throw new Error(`The partition count of "${topic}" is unknown here; a custom partitioner needs it`);
      });
    const output = this.withinLimit(sink.config.serializer.serialize(record.value, { timestamp: record.timestamp, partitionCount }));
    const list = this.outputs.sinks.get(name) ?? [];
    this.outputs.sinks.set(name, list);
    list.push(output);
    this.count('recordsOut');
  }

  private writeToRepartition(node: Extract<PlanNode, { role: 'repartition' }>, record: StreamRecord): void {
    const { topic, partitions, transformation } = node;
    const selected = transformation.keySelector(record.value);
    const key = keyRef(selected, this.options.plan.maxParallelism);
    const value: RepartitionValue = { v: record.value, t: record.timestamp ?? null };
    // The event time travels in the value; the record keeps the broker's write time, so time
    // retention never deletes a record the next stage has yet to read because its events are old.
    // The source record's position rides along, for a later stage's dead letters; output of a
    // timer or a window comes from no one record, and carries none.
    const headers = this.currentRecord ? sourcePosition(this.currentRecord) : [];
    const written = { topic, key: keyAsRecordKey(key), value: JSON.stringify(value), headers };
    if (transformation.broadcast && selected === BROADCAST_KEY) {
      // A broadcast element, to every shard of the next stage, in the same transaction as the rest.
      for (let partition = 0; partition < partitions; partition++) this.outputs.repartitions.push(this.withinLimit({ ...written, partition }));
    } else if (transformation.broadcast === 'forward') {
      // What a timer emits came from no record; its key's group spreads such elements as keys are.
      const from = this.currentRecord?.partition ?? this.currentKey?.keyGroup ?? 0;
      this.outputs.repartitions.push(this.withinLimit({ ...written, partition: from % partitions }));
    } else {
      this.outputs.repartitions.push(this.withinLimit(written));
    }
  }

  /**
   * The record, if its topic takes it. One that is too large fails here, while the input record
   * that produced it is known, so that the bad-record policy applies to that input instead of
   * the whole batch failing at the broker, again and again.
   */
  private withinLimit(record: OutputRecord): OutputRecord {
    const limit = this.options.maxRecordBytes?.(record.topic) ?? DEFAULT_MAX_MESSAGE_BYTES;
    const bytes = bytesOverLimit(record, limit);
    if (bytes !== undefined) throw new RecordTooLargeError(record.topic, bytes, limit);
    return record;
  }

  private count(metric: string, by = 1): void {
    this.metrics[metric] = (this.metrics[metric] ?? 0) + by;
  }

  private inputNode(): RuntimeNode {
    const [first] = this.order;
    if (!first) throw new Error(`${this.stage.id} has no nodes`);
    return first;
  }

  /**
   * Processes input records in order (one shard's batch, or several partitions' for a whole
   * source), then emits the source's watermark: the minimum over its active partitions.
   */
  processRecords(records: readonly KafkaRecord[], { holdWatermark = false } = {}): void {
    for (const record of records) this.processRecord(record);
    // The end of the records given is an emission point (see emissionSegments).
    for (const progress of this.partitions.values()) progress.generator.onPeriodicEmit(progress.output);
    if (!holdWatermark) this.emitSourceWatermark();
  }

  private processRecord(record: KafkaRecord): void {
    const input = this.inputNode();
    this.currentRecord = record;
    this.currentOperator = input.node.name;
    this.count('recordsIn');
    try {
      const element = this.decode(input.node, record);
      if (element) input.output.collect(element);
    } catch (error) {
      this.handleBadRecord(record, error);
    } finally {
      this.currentRecord = undefined;
      this.currentKey = undefined;
    }
  }

  /** The record's element, or undefined where its partition's stream has ended. */
  private decode(node: PlanNode, record: KafkaRecord): StreamRecord | undefined {
    if (node.role === 'repartition-input') return decodeRepartitionRecord(record);
    if (node.role !== 'source') throw new Error(`${this.stage.id} starts with ${node.role}, not an input`);
    const { source, watermarks } = node.transformation;
    const { deserializer } = source.config;
    if (this.partition(record.partition).ended) return undefined;
    const value = deserializer.deserialize(record);
    if (deserializer.isEndOfStream?.(value)) {
      const ended = this.partition(record.partition);
      ended.ended = true;
      ended.emitted = MAX_WATERMARK;
      return undefined;
    }
    const timestamp = watermarks.timestampAssigner ? watermarks.timestampAssigner(value, record.timestamp) : record.timestamp;
    // An event time that is not a whole number of milliseconds would travel on as null (JSON has
    // no Infinity) and fail a later stage far from its record; it is this record's fault.
    if (!Number.isSafeInteger(timestamp)) throw new Error(`its event time ${String(timestamp)} is not a whole number of milliseconds`);
    const { maxEventTimeAheadMs } = this.options.plan;
    if (maxEventTimeAheadMs !== undefined && timestamp > this.options.clock() + maxEventTimeAheadMs) {
      throw new Error(
        `its event time ${new Date(timestamp).toISOString()} is ${timestamp - this.options.clock()} ms ahead of processing time, ` +
          `more than the ${maxEventTimeAheadMs} ms that env.setMaxEventTimeAhead allows`,
      );
    }
    const progress = this.partition(record.partition);
    if (!this.assignsTimestamps) progress.generator.onEvent(value, timestamp, progress.output);
    progress.lastActive = this.options.clock();
    return { value, timestamp };
  }

  /** Hands a record that failed outside the stage's operators (its key's state too large) to the bad-record policy. */
  rejectRecord(record: KafkaRecord, error: Error): void {
    this.currentOperator = this.inputNode().node.name;
    this.count('recordsIn');
    this.handleBadRecord(record, error);
  }

  private handleBadRecord(record: KafkaRecord, error: unknown): void {
    const operatorName = error instanceof UserFunctionError ? error.operatorName : this.currentOperator;
    const includeContents = this.options.plan.recordContentsInErrors === true;
    const reason = describeRecordFailure(error, record, includeContents);
    const policy = this.options.plan.badRecordPolicy;
    if (policy.kind === 'fail') throw new BadRecordError(record, operatorName, reason, includeContents ? error : undefined);
    if (policy.kind === 'skip') {
      this.count('badRecordsSkipped');
      return;
    }
    this.count('badRecordsDeadLettered');
    this.outputs.deadLetters.push({
      topic: policy.topic,
      key: record.key,
      value: record.value,
      timestamp: record.timestamp,
      headers: [
        ...record.headers.flatMap((h) => (h.value === null || SOURCE_HEADERS.has(h.key) ? [] : [{ key: h.key, value: h.value }])),
        { key: Headers.error, value: reason },
        { key: Headers.operator, value: operatorName },
        ...sourcePosition(record),
        ...(this.stage.input.kind === 'repartition'
          ? [
              { key: Headers.repartitionTopic, value: record.topic },
              { key: Headers.repartitionPartition, value: String(record.partition) },
              { key: Headers.repartitionOffset, value: String(record.offset) },
            ]
          : []),
      ],
    });
  }

  private partition(partition: number): PartitionProgress {
    const existing = this.partitions.get(partition);
    if (existing) return existing;
    if (!this.watermarks) throw new Error(`${this.stage.id} reads no source: it has no source partitions`);
    const progress: PartitionProgress = {
      generator: this.watermarks.createGenerator(),
      lastActive: this.options.clock(),
      emitted: MIN_WATERMARK,
      markedIdle: false,
      ended: false,
      output: {
        emitWatermark: (watermark) => {
          if (!Number.isSafeInteger(watermark)) {
            throw new Error(`The watermark generator of partition ${partition} emitted ${String(watermark)}, not a whole number of milliseconds`);
          }
          progress.markedIdle = false;
          if (watermark > progress.emitted) progress.emitted = watermark;
        },
        markIdle: () => {
          progress.markedIdle = true;
        },
        markActive: () => {
          progress.markedIdle = false;
        },
      },
    };
    this.partitions.set(partition, progress);
    return progress;
  }

  /** A partition that holds the watermark back: neither marked idle by its generator nor silent for the idleness timeout. */
  private isActive(progress: PartitionProgress, idleness: number | undefined, now: number): boolean {
    return !progress.markedIdle && (idleness === undefined || now - progress.lastActive < idleness);
  }

  /**
   * Declares the source partitions this executor reads, so that one that has sent nothing
   * yet holds the watermark back until it turns idle (as a Flink source split does).
   */
  assignPartitions(partitions: readonly number[]): void {
    const input = this.inputNode().node;
    if (input.role !== 'source') throw new Error('Only a source stage has source partitions');
    for (const partition of partitions) this.partition(partition);
  }

  /**
   * The watermark the source would emit now — the minimum over its active partitions — or
   * the stage's current one when that is not higher (and for repartition inputs).
   */
  pendingWatermark(): number {
    const input = this.inputNode();
    if (input.node.role !== 'source') return this.sourceWatermark;
    const idleness = this.watermarks?.idlenessMs;
    const now = this.options.clock();
    const active = [...this.partitions.values()].filter((p) => this.isActive(p, idleness, now));
    if (active.length === 0) return this.sourceWatermark;
    return Math.max(this.sourceWatermark, Math.min(...active.map((p) => p.emitted)));
  }

  /**
   * Whether every source partition is idle — marked so by its generator, or silent for the
   * idleness timeout: then the stage's watermark stops holding back what comes after it, as an
   * idle Flink split does.
   */
  isIdle(): boolean {
    const input = this.inputNode();
    if (input.node.role !== 'source') return false;
    const idleness = this.watermarks?.idlenessMs;
    const partitions = [...this.partitions.values()];
    if (idleness === undefined && partitions.length === 0) return false;
    const now = this.options.clock();
    return partitions.every((p) => !this.isActive(p, idleness, now));
  }

  /** Emits the source's pending watermark (after `processRecords(..., { holdWatermark: true })`). */
  emitSourceWatermark(): void {
    this.processWatermark(this.pendingWatermark());
  }

  /** Advances event time at the stage's input: for repartition inputs, or a bounded source's end. */
  processWatermark(watermark: number): void {
    if (watermark <= this.sourceWatermark) return;
    this.sourceWatermark = watermark;
    this.inputNode().output.emitWatermark(watermark);
  }

  /** Fires processing-time timers due at the clock's current time, and lets idle partitions stop holding the watermark. */
  advanceProcessingTime(): void {
    const now = this.options.clock();
    for (const { operator, node } of this.order) {
      this.currentOperator = node.name;
      operator?.advanceProcessingTime(now);
    }
    this.emitSourceWatermark();
  }

  /** Ends a bounded input: the maximum watermark fires every remaining event-time window and timer. */
  finish(): void {
    this.processWatermark(MAX_WATERMARK);
  }

  /** Takes what the stage produced since the last call. */
  drainOutputs(): StageOutputs {
    const outputs = this.outputs;
    this.outputs = emptyStageOutputs();
    return outputs;
  }

  getMetrics(): Readonly<Metrics> {
    return { ...this.metrics };
  }

  currentWatermark(): number {
    return this.sourceWatermark;
  }

  /** The live timers of an operator, for inspection. */
  timers(operatorName: string): { eventTime: number[]; processingTime: number[] } {
    const queues = this.timerQueues.get(operatorName);
    if (!queues) throw new Error(`${this.stage.id} has no operator "${operatorName}"`);
    return {
      eventTime: queues.event.all().map((t) => t.timestamp),
      processingTime: queues.processing.all().map((t) => t.timestamp),
    };
  }
}
