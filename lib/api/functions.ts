import type { OutputTag } from './output-tag.js';
import type {
  ListState,
  ListStateDescriptor,
  MapState,
  MapStateDescriptor,
  ValueState,
  ValueStateDescriptor,
} from './state.js';
import type { TimeWindow } from './windows.js';

/** What a function may know about the element it is given. */
export interface ElementContext {
  /** The element's event time; undefined for elements without one (processing-time pipelines). */
  readonly timestamp: number | undefined;
}

export type MapFunction<T, R> = (value: T, context: ElementContext) => R;
export type FilterFunction<T> = (value: T, context: ElementContext) => boolean;
export type FlatMapFunction<T, R> = (value: T, context: ElementContext) => Iterable<R>;
/** Picks the key of an element; keys must be strings, numbers, booleans or JSON arrays of them. */
export type KeySelector<T, K> = (value: T) => K;
export type ReduceFunction<T> = (accumulated: T, value: T) => T;

export interface Collector<T> {
  collect(value: T): void;
}

/** Incremental aggregation with an accumulator, as Flink's `AggregateFunction<IN, ACC, OUT>`. */
export interface AggregateFunction<IN, ACC, OUT> {
  createAccumulator(): ACC;
  add(value: IN, accumulator: ACC): ACC;
  getResult(accumulator: ACC): OUT;
  /** Needed by merging (session) windows. */
  merge?(a: ACC, b: ACC): ACC;
}

export interface TimerService {
  currentProcessingTime(): number;
  currentWatermark(): number;
  registerEventTimeTimer(timestamp: number): void;
  registerProcessingTimeTimer(timestamp: number): void;
  deleteEventTimeTimer(timestamp: number): void;
  deleteProcessingTimeTimer(timestamp: number): void;
}

/** Keyed state for the current key. */
export interface RuntimeContext {
  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  getMapState<K extends string | number, V>(descriptor: MapStateDescriptor<K, V>): MapState<K, V>;
  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
}

/** Its functions need no `this`: a function may destructure them (`{ timerService, output }`). */
export interface ProcessContext extends ElementContext {
  readonly timerService: () => TimerService;
  /** Emits to a side output. */
  readonly output: <X>(tag: OutputTag<X>, value: X) => void;
}

export interface KeyedProcessContext<K, S = void> extends ProcessContext {
  readonly getCurrentKey: () => K;
  /** The state handles that `open` returned (see `KeyedStream.withState`), for the current key. */
  readonly state: S;
}

export interface OnTimerContext<K, S = void> extends KeyedProcessContext<K, S> {
  readonly timeDomain: 'EVENT_TIME' | 'PROCESSING_TIME';
}

/** A function over a non-keyed stream, as Flink's `ProcessFunction<I, O>`. */
export interface ProcessFunction<I, O> {
  processElement(value: I, context: ProcessContext, out: Collector<O>): void;
}

/**
 * A function over a keyed stream with state and timers, as Flink's `KeyedProcessFunction<K, I, O>`.
 * `S` is what `open` returns: the state handles, which every context carries as `context.state`.
 */
export interface KeyedProcessFunction<K, I, O, S = void> {
  /** Called once before any element; declare state here (`state.getState(descriptor)`) and return the handles. */
  open?(state: RuntimeContext): S;
  processElement(value: I, context: KeyedProcessContext<K, S>, out: Collector<O>): void;
  onTimer?(timestamp: number, context: OnTimerContext<K, S>, out: Collector<O>): void;
}

export interface WindowContext<W = TimeWindow> {
  readonly window: W;
  currentWatermark(): number;
  currentProcessingTime(): number;
  /**
   * State of this key in this window, kept across its firings (the first, and each late one
   * within the allowed lateness) and dropped with the window at its cleanup time, as Flink
   * drops it when `clear()` clears it. Not for merging (session) windows, as in Flink.
   */
  windowState(): RuntimeContext;
  /** State of this key across all its windows. */
  globalState(): RuntimeContext;
  output<X>(tag: OutputTag<X>, value: X): void;
}

/** Sees every element of a window (or the pre-aggregated result) when it fires. */
export type ProcessWindowFunction<IN, OUT, K, W = TimeWindow> = (
  key: K,
  context: WindowContext<W>,
  elements: readonly IN[],
  out: Collector<OUT>,
) => void;
