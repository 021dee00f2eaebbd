import type { OutputTag } from './output-tag.js';
import type {
  ListState,
  ListStateDescriptor,
  MapState,
  MapStateDescriptor,
  ReducingState,
  ReducingStateDescriptor,
  ValueState,
  ValueStateDescriptor,
} from './state.js';
import type { TimeWindow } from './windows.js';

/**
 * Whether a stream's elements carry a timestamp: `number` for every stream from a source (its
 * records' event time, or their Kafka timestamp), and `number | undefined` after a keyed process
 * function, whose processing-time timers emit elements without one (as Flink's do).
 */
export type Timestamp = number | undefined;

/** What a function may know about the element it is given. */
export interface ElementContext<TS extends Timestamp = Timestamp> {
  /** The element's event time. */
  readonly timestamp: TS;
}

export type MapFunction<T, R, TS extends Timestamp = Timestamp> = (value: T, context: ElementContext<TS>) => R;
export type FilterFunction<T, TS extends Timestamp = Timestamp> = (value: T, context: ElementContext<TS>) => boolean;
export type FlatMapFunction<T, R, TS extends Timestamp = Timestamp> = (value: T, context: ElementContext<TS>) => Iterable<R>;
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
  getReducingState<T>(descriptor: ReducingStateDescriptor<T>): ReducingState<T>;
}

/** Its functions need no `this`: a function may destructure them (`{ timerService, output }`). */
export interface ProcessContext<TS extends Timestamp = Timestamp> extends ElementContext<TS> {
  readonly timerService: () => TimerService;
  /** Emits to a side output. */
  readonly output: <X>(tag: OutputTag<X>, value: X) => void;
}

export interface KeyedProcessContext<K, S = void, TS extends Timestamp = Timestamp> extends ProcessContext<TS> {
  readonly getCurrentKey: () => K;
  /** The state handles that `open` returned (see `KeyedStream.withState`), for the current key. */
  readonly state: S;
}

/** A timer's context: the timestamp is the timer's for an event-time timer, undefined for a processing-time one. */
export interface OnTimerContext<K, S = void> extends KeyedProcessContext<K, S> {
  readonly timeDomain: 'EVENT_TIME' | 'PROCESSING_TIME';
}

/** A function over a non-keyed stream, as Flink's `ProcessFunction<I, O>`. */
export interface ProcessFunction<I, O, TS extends Timestamp = Timestamp> {
  processElement(value: I, context: ProcessContext<TS>, out: Collector<O>): void;
}

/**
 * A function over a keyed stream with state and timers, as Flink's `KeyedProcessFunction<K, I, O>`.
 * `S` is what `open` returns: the state handles, which every context carries as `context.state`.
 */
export interface KeyedProcessFunction<K, I, O, S = void, TS extends Timestamp = Timestamp> {
  /** Called once before any element; declare state here (`state.getState(descriptor)`) and return the handles. */
  open?(state: RuntimeContext): S;
  processElement(value: I, context: KeyedProcessContext<K, S, TS>, out: Collector<O>): void;
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

/** A `ProcessWindowFunction` of a non-keyed window (`windowAll`), as Flink's `ProcessAllWindowFunction`. */
export type ProcessAllWindowFunction<IN, OUT, W = TimeWindow> = (context: WindowContext<W>, elements: readonly IN[], out: Collector<OUT>) => void;

/** One function for each input of connected streams, as Flink's `CoMapFunction<IN1, IN2, OUT>`. */
export interface CoMapFunction<IN1, IN2, OUT> {
  map1(value: IN1, context: ElementContext): OUT;
  map2(value: IN2, context: ElementContext): OUT;
}

/** As Flink's `CoFlatMapFunction<IN1, IN2, OUT>`: each returns an iterable. */
export interface CoFlatMapFunction<IN1, IN2, OUT> {
  flatMap1(value: IN1, context: ElementContext): Iterable<OUT>;
  flatMap2(value: IN2, context: ElementContext): Iterable<OUT>;
}

/** A function over two non-keyed inputs with side outputs (no state, no timers), as Flink's `CoProcessFunction`. */
export interface CoProcessFunction<IN1, IN2, OUT> {
  processElement1(value: IN1, context: ProcessContext, out: Collector<OUT>): void;
  processElement2(value: IN2, context: ProcessContext, out: Collector<OUT>): void;
}

/**
 * A function over two inputs keyed alike, sharing the key's state and timers, as Flink's
 * `KeyedCoProcessFunction<K, IN1, IN2, OUT>`. `S` is what `open` returns, as for a `KeyedProcessFunction`.
 */
export interface KeyedCoProcessFunction<K, IN1, IN2, OUT, S = void> {
  open?(state: RuntimeContext): S;
  processElement1(value: IN1, context: KeyedProcessContext<K, S>, out: Collector<OUT>): void;
  processElement2(value: IN2, context: KeyedProcessContext<K, S>, out: Collector<OUT>): void;
  onTimer?(timestamp: number, context: OnTimerContext<K, S>, out: Collector<OUT>): void;
}

/** The timestamps of a joined pair; the result carries the later one. */
export interface ProcessJoinContext {
  readonly leftTimestamp: number;
  readonly rightTimestamp: number;
  readonly timestamp: number;
  output<X>(tag: OutputTag<X>, value: X): void;
}

/** Called for each pair an interval join matches, as Flink's `ProcessJoinFunction<IN1, IN2, OUT>`. */
export type ProcessJoinFunction<IN1, IN2, OUT> = (left: IN1, right: IN2, context: ProcessJoinContext, out: Collector<OUT>) => void;

/** Called for each pair of a window join, as Flink's `JoinFunction<IN1, IN2, OUT>`. */
export type JoinFunction<IN1, IN2, OUT> = (first: IN1, second: IN2) => OUT;

/** Called once per key and window with both inputs' elements (either may be empty), as Flink's `CoGroupFunction`. */
export type CoGroupFunction<IN1, IN2, OUT> = (first: readonly IN1[], second: readonly IN2[], out: Collector<OUT>) => void;

/** A broadcast state as the keyed side sees it, as Flink's `ReadOnlyBroadcastState`. */
export interface ReadOnlyBroadcastState<K extends string | number, V> {
  get(key: K): V | undefined;
  contains(key: K): boolean;
  entries(): [K, V][];
}

/** A broadcast state as the broadcast side writes it, as Flink's `BroadcastState`. */
export interface BroadcastState<K extends string | number, V> extends ReadOnlyBroadcastState<K, V> {
  put(key: K, value: V): void;
  remove(key: K): void;
  clear(): void;
}

/** What the keyed side of a broadcast connection may read: its key's context, and the broadcast state. */
export interface KeyedBroadcastReadOnlyContext<K, S = void> extends KeyedProcessContext<K, S> {
  readonly currentWatermark: () => number;
  readonly currentProcessingTime: () => number;
  readonly getBroadcastState: <BK extends string | number, BV>(descriptor: MapStateDescriptor<BK, BV>) => ReadOnlyBroadcastState<BK, BV>;
}

/** What every function of a broadcast connection may do with the element at hand, as Flink's `BaseBroadcastProcessFunction.Context`. */
interface BroadcastElementContext {
  readonly timestamp: number | undefined;
  readonly output: <X>(tag: OutputTag<X>, value: X) => void;
  readonly currentWatermark: () => number;
  readonly currentProcessingTime: () => number;
}

/** What a broadcast element's function may do: write the broadcast state, and emit. */
export interface BroadcastContext extends BroadcastElementContext {
  readonly getBroadcastState: <BK extends string | number, BV>(descriptor: MapStateDescriptor<BK, BV>) => BroadcastState<BK, BV>;
}

/** What the non-keyed side of a broadcast connection may do: read the broadcast state, and emit. */
export interface BroadcastReadOnlyContext extends BroadcastElementContext {
  readonly getBroadcastState: <BK extends string | number, BV>(descriptor: MapStateDescriptor<BK, BV>) => ReadOnlyBroadcastState<BK, BV>;
}

/**
 * A keyed stream connected with a broadcast stream, as Flink's `KeyedBroadcastProcessFunction`:
 * every broadcast element reaches every shard, which keeps the broadcast state; the keyed side
 * reads it with its key's state and timers.
 */
export interface KeyedBroadcastProcessFunction<K, IN1, IN2, OUT, S = void> {
  open?(state: RuntimeContext): S;
  processElement(value: IN1, context: KeyedBroadcastReadOnlyContext<K, S>, out: Collector<OUT>): void;
  processBroadcastElement(value: IN2, context: BroadcastContext, out: Collector<OUT>): void;
  onTimer?(timestamp: number, context: OnTimerContext<K, S> & Pick<KeyedBroadcastReadOnlyContext<K, S>, 'getBroadcastState'>, out: Collector<OUT>): void;
}

/**
 * A non-keyed stream connected with a broadcast stream, as Flink's `BroadcastProcessFunction`:
 * every broadcast element reaches every shard, which keeps the broadcast state; each element of
 * the other side reads it on the shard its record came from. No keyed state, no timers.
 */
export interface BroadcastProcessFunction<IN1, IN2, OUT> {
  processElement(value: IN1, context: BroadcastReadOnlyContext, out: Collector<OUT>): void;
  processBroadcastElement(value: IN2, context: BroadcastContext, out: Collector<OUT>): void;
}
