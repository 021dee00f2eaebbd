import type {
  Collector,
  ElementContext,
  FilterFunction,
  FlatMapFunction,
  KeyedProcessContext,
  KeyedProcessFunction,
  KeySelector,
  MapFunction,
  ProcessFunction,
  ReduceFunction,
  RuntimeContext,
  TimerService,
} from '../api/functions.js';
import type { OutputTag } from '../api/output-tag.js';
import { MIN_WATERMARK } from '../api/time.js';
import type { WatermarkStrategy } from '../api/watermark.js';
import { ValueStateDescriptor, type AnyStateDescriptor, type ReducingStateDescriptor, type ValueState } from '../api/state.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import { runtimeContext, valueState } from './keyed-state.js';
import { StreamOperator, type StreamRecord } from './operator.js';
import type { TimeDomain, Timer } from './timers.js';

/** Key references a keyBy keeps at most; past that it starts over, so that memory stays bounded whatever the key space. */
const MAX_CACHED_KEY_REFS = 10_000;

function elementContext(record: StreamRecord): ElementContext {
  return { timestamp: record.timestamp };
}

export class MapOperator<T, R> extends StreamOperator {
  constructor(private readonly fn: MapFunction<T, R>) {
    super();
  }

  processElement(record: StreamRecord): void {
    const value = this.call(() => this.fn(record.value as T, elementContext(record)));
    this.output.collect({ value, timestamp: record.timestamp });
  }
}

export class FilterOperator<T> extends StreamOperator {
  constructor(private readonly fn: FilterFunction<T>) {
    super();
  }

  processElement(record: StreamRecord): void {
    if (this.call(() => this.fn(record.value as T, elementContext(record)))) {
      this.output.collect({ value: record.value, timestamp: record.timestamp });
    }
  }
}

export class FlatMapOperator<T, R> extends StreamOperator {
  constructor(private readonly fn: FlatMapFunction<T, R>) {
    super();
  }

  processElement(record: StreamRecord): void {
    const values = this.call(() => [...this.fn(record.value as T, elementContext(record))]);
    for (const value of values) this.output.collect({ value, timestamp: record.timestamp });
  }
}

/**
 * `assignTimestampsAndWatermarks`: stamps each element with the strategy's event time and
 * shows it to the partition's watermark generator. The stage's watermark then comes from those
 * generators (StageExecutor), and reaches every operator, this one included, unchanged.
 */
export class TimestampsAndWatermarksOperator<T> extends StreamOperator {
  constructor(private readonly strategy: WatermarkStrategy<T>) {
    super();
  }

  processElement(record: StreamRecord): void {
    const value = record.value as T;
    const { timestampAssigner } = this.strategy;
    const timestamp = timestampAssigner ? this.call(() => timestampAssigner(value, record.timestamp ?? MIN_WATERMARK)) : record.timestamp;
    // Not in this.call: a timestamp that cannot be one is the record's fault, named as at a source.
    if (timestamp === undefined || !Number.isSafeInteger(timestamp)) {
      throw new Error(`its event time ${String(timestamp)} is not a whole number of milliseconds`);
    }
    this.services.onEventTime(value, timestamp);
    this.output.collect({ value, timestamp });
  }
}

/** Computes each element's key; keyed operators after it run under that key. */
export class KeyByOperator<T, K> extends StreamOperator {
  constructor(
    private readonly selector: KeySelector<T, K>,
    private readonly maxParallelism: number,
    /** For a keyBy that keeps the input's partitioning: throws when a key is not the record's. */
    private readonly checkKey?: (key: KeyRef) => void,
  ) {
    super();
  }

  /**
   * The key references of string and number keys seen so far: a stream has few distinct keys
   * next to its records, and each reference costs a JSON text and a hash to build.
   */
  private readonly keyRefs = new Map<unknown, KeyRef>();

  processElement(record: StreamRecord): void {
    const selected = this.call(() => this.selector(record.value as T));
    const key = this.keyRefOf(selected);
    this.checkKey?.(key);
    this.output.collect({ value: record.value, timestamp: record.timestamp, key });
  }

  private keyRefOf(selected: K): KeyRef {
    if (typeof selected !== 'string' && typeof selected !== 'number') return this.call(() => keyRef(selected, this.maxParallelism));
    const known = this.keyRefs.get(selected);
    if (known) return known;
    const key = this.call(() => keyRef(selected, this.maxParallelism));
    if (this.keyRefs.size >= MAX_CACHED_KEY_REFS) this.keyRefs.clear();
    this.keyRefs.set(selected, key);
    return key;
  }
}

/** A user function's view of time and side outputs, for the element or timer at hand. */
abstract class ContextOperator extends StreamOperator {
  protected timestamp: number | undefined;

  protected sideOutput<X>(tag: OutputTag<X>, value: X): void {
    this.output.side(tag, { value, timestamp: this.timestamp });
  }

  protected collector<R>(key?: KeyRef): Collector<R> {
    return {
      collect: (value: R) => {
        this.output.collect({ value, timestamp: this.timestamp, ...(key ? { key } : {}) });
      },
    };
  }
}

export class ProcessOperator<T, R> extends ContextOperator {
  constructor(private readonly fn: ProcessFunction<T, R>) {
    super();
  }

  processElement(record: StreamRecord): void {
    this.timestamp = record.timestamp;
    const refuse = (): never => {
      throw new Error('Timers need a keyed stream: call keyBy(...) before process(...)');
    };
    const timers: TimerService = {
      currentProcessingTime: () => this.services.processingTime(),
      currentWatermark: () => this.watermark,
      registerEventTimeTimer: refuse,
      registerProcessingTimeTimer: refuse,
      deleteEventTimeTimer: refuse,
      deleteProcessingTimeTimer: refuse,
    };
    this.call(() =>
      this.fn.processElement(
        record.value as T,
        { timestamp: record.timestamp, timerService: () => timers, output: (tag, value) => this.sideOutput(tag, value) },
        this.collector<R>(),
      ),
    );
  }
}

const USER_TIMERS = '';

export class KeyedProcessOperator<K, T, R, S = void> extends ContextOperator {
  private state!: RuntimeContext;
  /** What the function's `open` returned: its state handles. */
  private handles!: S;
  private readonly timers: TimerService = {
    currentProcessingTime: () => this.services.processingTime(),
    currentWatermark: () => this.watermark,
    registerEventTimeTimer: (timestamp) => this.services.eventTimers.register(this.userTimer(timestamp)),
    registerProcessingTimeTimer: (timestamp) => this.services.processingTimers.register(this.userTimer(timestamp)),
    deleteEventTimeTimer: (timestamp) => this.services.eventTimers.delete(this.userTimer(timestamp)),
    deleteProcessingTimeTimer: (timestamp) => this.services.processingTimers.delete(this.userTimer(timestamp)),
  };

  constructor(private readonly fn: KeyedProcessFunction<K, T, R, S>) {
    super();
  }

  private userTimer(timestamp: number): Timer {
    return { key: this.services.currentKey(), timestamp, namespace: USER_TIMERS };
  }

  override open(): void {
    this.state = runtimeContext(this.services);
    const state = this.state;
    this.handles = this.call(() => this.fn.open?.(state)) as S;
  }

  override describeState(): AnyStateDescriptor[] {
    const declared: AnyStateDescriptor[] = [];
    const recorder: RuntimeContext = {
      getState: (descriptor) => (declared.push(descriptor), undefined as never),
      getMapState: (descriptor) => (declared.push(descriptor), undefined as never),
      getListState: (descriptor) => (declared.push(descriptor), undefined as never),
      getReducingState: (descriptor) => (declared.push(descriptor as ReducingStateDescriptor<unknown>), undefined as never),
    };
    this.fn.open?.(recorder);
    return declared;
  }

  private context(timestamp: number | undefined): KeyedProcessContext<K, S> {
    return {
      timestamp,
      timerService: () => this.timers,
      output: (tag, value) => this.sideOutput(tag, value),
      getCurrentKey: () => this.services.currentKey().value as K,
      state: this.handles,
    };
  }

  processElement(record: StreamRecord): void {
    this.timestamp = record.timestamp;
    this.call(() => this.fn.processElement(record.value as T, this.context(record.timestamp), this.collector<R>()));
  }

  protected override onTimer(timer: Timer, domain: TimeDomain): void {
    if (!this.fn.onTimer) return;
    this.timestamp = domain === 'EVENT_TIME' ? timer.timestamp : undefined;
    const context = { ...this.context(this.timestamp), timeDomain: domain };
    this.call(() => this.fn.onTimer?.(timer.timestamp, context, this.collector<R>()));
  }
}

const ROLLING_STATE = new ValueStateDescriptor<unknown>('reduce');

/** KeyedStream.reduce, sum, min, max, minBy, maxBy: emits the running result for every element. */
export class RollingReduceOperator<T> extends StreamOperator {
  constructor(private readonly fn: ReduceFunction<T>) {
    super();
  }

  override describeState(): AnyStateDescriptor[] {
    return [ROLLING_STATE];
  }

  private rolling: ValueState<T> | undefined;

  processElement(record: StreamRecord): void {
    // One accessor serves every record, as it reads the current key when used.
    const state = (this.rolling ??= valueState(this.services, ROLLING_STATE as ValueStateDescriptor<T>));
    const previous = state.value();
    const value = previous === undefined ? (record.value as T) : this.call(() => this.fn(previous, record.value as T));
    state.update(value);
    this.output.collect({ value, timestamp: record.timestamp });
  }
}
