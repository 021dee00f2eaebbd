import {
  aggregateWindowFunction,
  fieldAggregation,
  processWindowFunction,
  reduceWindowFunction,
  WindowOperator,
  type FieldAggregation,
  type WindowFunctionSpec,
} from '../operators/window-operator.js';
import {
  FilterOperator,
  FlatMapOperator,
  KeyedProcessOperator,
  MapOperator,
  ProcessOperator,
  RollingReduceOperator,
  TimestampsAndWatermarksOperator,
} from '../operators/basic-operators.js';
import type { OperatorFactory } from '../operators/operator.js';
import type { StreamExecutionEnvironment } from './environment.js';
import type {
  AggregateFunction,
  FilterFunction,
  FlatMapFunction,
  KeyedProcessFunction,
  KeySelector,
  MapFunction,
  ProcessAllWindowFunction,
  ProcessFunction,
  ProcessWindowFunction,
  ReduceFunction,
  RuntimeContext,
  Timestamp,
} from './functions.js';
import type { OutputTag } from './output-tag.js';
import type { KafkaSink } from './sink.js';
import type { AnyStateDescriptor, MapStateDescriptor } from './state.js';
import type { Transformation } from './transformations.js';
import type { WatermarkStrategy } from './watermark.js';
import {
  BroadcastConnectedStream,
  BroadcastStream,
  KeyedBroadcastConnectedStream,
  coGroupedStreams,
  ConnectedStreams,
  IntervalJoin,
  joinedStreams,
  type CoGroupedWindow,
  type JoinedWindow,
  type KeyedConnectedStreams,
  type KeysThenWindow,
} from './connected-streams.js';
import { CountEvictor, type Evictor } from './evictors.js';
import { CountTrigger, describeStrategy, PurgingTrigger, type Trigger } from './triggers.js';
import { GlobalWindows, type WindowAssigner } from './windows.js';

/** The names of `T`'s numeric fields, for `sum('amount')` and friends. */
export type NumericField<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T] & string;

export interface OperatorSpec {
  readonly operatorKind: string;
  readonly description: string;
  readonly factory: OperatorFactory;
  readonly keyed?: boolean;
  readonly eventTime?: boolean;
  readonly state?: readonly AnyStateDescriptor[];
  readonly watermarks?: WatermarkStrategy<unknown>;
}

/**
 * A stream of elements of type `T` (Flink's `DataStream<T>`); `TS` says whether its elements
 * carry a timestamp (see {@link Timestamp}): `number` from a source on, so that a function's
 * `context.timestamp` is a `number` wherever it always is. `DataStream<T>` takes either.
 */
export class DataStream<T, TS extends Timestamp = Timestamp> {
  /** Only carries `T`; never set. */
  declare readonly elementType?: T;

  constructor(
    protected readonly env: StreamExecutionEnvironment,
    /** @internal */ readonly transformation: Transformation,
  ) {}

  getExecutionEnvironment(): StreamExecutionEnvironment {
    return this.env;
  }

  /** @internal Adds an operator after this stream. */
  addOperator<R, RTS extends Timestamp = TS>(spec: OperatorSpec): SingleOutputStreamOperator<R, RTS> {
    const transformation = this.env.addTransformation({
      kind: 'operator',
      name: spec.operatorKind,
      inputs: [this.transformation],
      operatorKind: spec.operatorKind,
      description: spec.description,
      factory: spec.factory,
      keyed: spec.keyed ?? false,
      eventTime: spec.eventTime ?? false,
      state: spec.state ?? [],
      ...(spec.watermarks ? { watermarks: spec.watermarks } : {}),
    });
    return new SingleOutputStreamOperator<R, RTS>(this.env, transformation);
  }

  map<R>(fn: MapFunction<T, R, TS>): SingleOutputStreamOperator<R, TS> {
    return this.addOperator({ operatorKind: 'map', description: 'map', factory: () => new MapOperator(fn as MapFunction<T, R>) });
  }

  filter(fn: FilterFunction<T, TS>): SingleOutputStreamOperator<T, TS> {
    return this.addOperator({ operatorKind: 'filter', description: 'filter', factory: () => new FilterOperator(fn as FilterFunction<T>) });
  }

  flatMap<R>(fn: FlatMapFunction<T, R, TS>): SingleOutputStreamOperator<R, TS> {
    return this.addOperator({ operatorKind: 'flatMap', description: 'flatMap', factory: () => new FlatMapOperator(fn as FlatMapFunction<T, R>) });
  }

  /**
   * A function with side outputs, over a non-keyed stream (no state, no timers). Its output is
   * typed as a keyed process function's is, which may emit from processing-time timers without
   * a timestamp.
   */
  process<R>(fn: ProcessFunction<T, R, TS>): SingleOutputStreamOperator<R> {
    if ('onTimer' in fn || 'open' in fn) {
      throw new Error(
        'A function with state or timers (open/onTimer) needs a keyed stream: call keyBy(...) before process(...)',
      );
    }
    return this.addOperator({ operatorKind: 'process', description: 'process function', factory: () => new ProcessOperator(fn as ProcessFunction<T, R>) });
  }

  /**
   * Gives the stream new timestamps and watermarks, as Flink's `assignTimestampsAndWatermarks`:
   * each element's event time from the strategy's assigner (or its record's timestamp), and the
   * watermarks from its generator, one per source partition. It belongs between a source
   * declared with `WatermarkStrategy.noWatermarks()` and the first keyBy that repartitions,
   * after element-wise functions only (map, filter, flatMap, process): a later stage's watermark
   * comes from the stages before it.
   */
  assignTimestampsAndWatermarks(strategy: WatermarkStrategy<T>): SingleOutputStreamOperator<T, number> {
    return this.addOperator<T, number>({
      operatorKind: 'assignTimestampsAndWatermarks',
      description: `timestamps and watermarks: ${strategy.description}${strategy.idlenessMs ? `, idle after ${strategy.idlenessMs} ms` : ''}`,
      factory: () => new TimestampsAndWatermarksOperator(strategy as WatermarkStrategy<unknown>),
      watermarks: strategy as WatermarkStrategy<unknown>,
    });
  }

  /**
   * Partitions the stream by key. Keyed state and windows that follow live with their key.
   * Unless the input is already partitioned by this key, the planner routes the stream
   * through a repartition topic and starts a new stage there.
   */
  keyBy<K>(selector: KeySelector<T, K>): KeyedStream<T, K, TS> {
    const transformation = this.env.addTransformation({
      kind: 'keyBy',
      name: 'keyBy',
      inputs: [this.transformation],
      keySelector: selector as KeySelector<unknown, unknown>,
    });
    return new KeyedStream<T, K, TS>(this.env, transformation);
  }

  /**
   * Sends every element to every shard of the stream it is connected to, which keeps them in
   * the broadcast states `descriptors` name (Flink's `broadcast(MapStateDescriptor...)`).
   */
  broadcast(...descriptors: MapStateDescriptor<string | number, unknown>[]): BroadcastStream<T> {
    return new BroadcastStream<T>(this, descriptors);
  }

  /**
   * Brings another stream, of any type, to one function of two inputs (Flink's `connect`). With a
   * broadcast stream, a `BroadcastProcessFunction` sees every broadcast element on every shard.
   */
  connect<T2>(other: BroadcastStream<T2>): BroadcastConnectedStream<T, T2>;
  connect<T2>(other: DataStream<T2>): ConnectedStreams<T, T2>;
  connect<T2>(other: DataStream<T2> | BroadcastStream<T2>): ConnectedStreams<T, T2> | BroadcastConnectedStream<T, T2> {
    if (other instanceof BroadcastStream) return new BroadcastConnectedStream(this, other);
    return new ConnectedStreams<T, T2>(this, other);
  }

  /** A window join: `join(other).where(key).equalTo(otherKey).window(assigner).apply((a, b) => ...)`. */
  join<T2>(other: DataStream<T2>): KeysThenWindow<T, T2, JoinedWindow<T, T2>> {
    return joinedStreams<T, T2>(this, other);
  }

  /** A window coGroup: `coGroup(other).where(key).equalTo(otherKey).window(assigner).apply((as, bs, out) => ...)`. */
  coGroup<T2>(other: DataStream<T2>): KeysThenWindow<T, T2, CoGroupedWindow<T, T2>> {
    return coGroupedStreams<T, T2>(this, other);
  }

  /**
   * Windows over the whole stream, not per key, as Flink's `windowAll`: every element goes
   * through a repartition topic of one partition to one shard, which does all the window's work.
   */
  windowAll(assigner: WindowAssigner): AllWindowedStream<T> {
    const transformation = this.env.addTransformation({
      kind: 'keyBy',
      name: 'windowAll',
      inputs: [this.transformation],
      keySelector: () => ALL_ELEMENTS_KEY,
      allToOne: true,
    });
    return new AllWindowedStream<T>(new KeyedStream<T, typeof ALL_ELEMENTS_KEY, TS>(this.env, transformation).window(assigner));
  }

  /** `countWindow` over the whole stream: see {@link KeyedStream.countWindow} and {@link windowAll}. */
  countWindowAll(size: number, slide?: number): AllWindowedStream<T> {
    return countWindowOf(this.windowAll(GlobalWindows.create()), size, slide);
  }

  /** Merges streams of the same type; the watermark is the minimum over the inputs. */
  union<OTS extends Timestamp>(...others: DataStream<T, OTS>[]): DataStream<T, TS | OTS> {
    const transformation = this.env.addTransformation({
      kind: 'union',
      name: 'union',
      inputs: [this.transformation, ...others.map((other) => other.transformation)],
    });
    return new DataStream<T, TS | OTS>(this.env, transformation);
  }

  sinkTo(sink: KafkaSink<T>): DataStreamSink {
    const transformation = this.env.addTransformation({
      kind: 'sink',
      name: 'sink',
      inputs: [this.transformation],
      sink: sink,
    });
    return new DataStreamSink(this.env, transformation);
  }
}

/** A stream produced by an operator: can be named, and has side outputs. */
export class SingleOutputStreamOperator<T, TS extends Timestamp = Timestamp> extends DataStream<T, TS> {
  /** Names the operator (its state, and `explain` output, use the name). */
  name(name: string): this {
    this.env.renameTransformation(this.transformation, name);
    return this;
  }

  getSideOutput<X>(tag: OutputTag<X>): DataStream<X, TS> {
    const transformation = this.env.addTransformation({
      kind: 'sideOutput',
      name: `side-output-${tag.id}`,
      inputs: [this.transformation],
      tag: tag,
    });
    return new DataStream<X, TS>(this.env, transformation);
  }
}

export class DataStreamSink {
  constructor(
    private readonly env: StreamExecutionEnvironment,
    /** @internal */ readonly transformation: Transformation,
  ) {}

  /** Names the sink (its transactional ids and `explain` output use the name). */
  name(name: string): this {
    this.env.renameTransformation(this.transformation, name);
    return this;
  }
}

/** A stream partitioned by key (Flink's `KeyedStream<T, K>`). */
export class KeyedStream<T, K, TS extends Timestamp = Timestamp> extends DataStream<T, TS> {
  private keyed<R, RTS extends Timestamp = TS>(spec: Omit<OperatorSpec, 'keyed'>): SingleOutputStreamOperator<R, RTS> {
    return this.addOperator<R, RTS>({ ...spec, keyed: true });
  }

  /** Keyed state and timers for each element. Declare state in `open`. */
  override process<R, S = void>(fn: KeyedProcessFunction<K, T, R, S, TS>): SingleOutputStreamOperator<R> {
    return this.keyed<R, Timestamp>({
      operatorKind: 'keyedProcess',
      description: 'keyed process function',
      factory: () => new KeyedProcessOperator<K, T, R, S>(fn),
    });
  }

  /**
   * Declares the state of the process function that follows, typed: `open` returns the handles,
   * and every context of the function carries them as `context.state`, for the current key.
   *
   *     keyed.withState((state) => ({ count: state.getState(new ValueStateDescriptor<number>('count', 0)) }))
   *       .process<string>({ processElement(order, { state }, out) { state.count.update(...) } })
   */
  withState<S>(open: (state: RuntimeContext) => S): {
    process<R>(fn: Omit<KeyedProcessFunction<K, T, R, S, TS>, 'open'>): SingleOutputStreamOperator<R>;
  } {
    return { process: <R>(fn: Omit<KeyedProcessFunction<K, T, R, S, TS>, 'open'>) => this.process<R, S>({ ...fn, open }) };
  }

  /** A running reduce per key: emits the accumulated value for every element. */
  reduce(fn: ReduceFunction<T>): SingleOutputStreamOperator<T, TS> {
    return this.keyed<T>({ operatorKind: 'reduce', description: 'rolling reduce', factory: () => new RollingReduceOperator(fn) });
  }

  sum(field: NumericField<T>): SingleOutputStreamOperator<T, TS> {
    return this.rolling('sum', field);
  }

  min(field: NumericField<T>): SingleOutputStreamOperator<T, TS> {
    return this.rolling('min', field);
  }

  max(field: NumericField<T>): SingleOutputStreamOperator<T, TS> {
    return this.rolling('max', field);
  }

  /** The element with the smallest `field` so far; on a tie the first one, or with `first` false the latest (as Flink). */
  minBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, TS> {
    return this.rolling('minBy', field, first);
  }

  /** The element with the largest `field` so far; on a tie the first one, or with `first` false the latest (as Flink). */
  maxBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, TS> {
    return this.rolling('maxBy', field, first);
  }

  private rolling(aggregation: FieldAggregation, field: string, first = true): SingleOutputStreamOperator<T, TS> {
    const fn = fieldAggregation<T>(aggregation, field, first);
    return this.keyed<T>({
      operatorKind: aggregation,
      description: `rolling ${aggregation}('${field}'${first ? '' : ', false'})`,
      factory: () => new RollingReduceOperator(fn),
    });
  }

  window(assigner: WindowAssigner): WindowedStream<T, K> {
    return new WindowedStream<T, K>(this, assigner);
  }

  /**
   * With another keyed stream: a `KeyedCoProcessFunction` sees both streams' elements of a key,
   * with its state and timers. With a non-keyed one, as `DataStream.connect`.
   */
  override connect<T2>(other: KeyedStream<T2, K>): KeyedConnectedStreams<T, T2, K>;
  override connect<T2>(other: BroadcastStream<T2>): KeyedBroadcastConnectedStream<T, T2, K>;
  override connect<T2>(other: DataStream<T2>): ConnectedStreams<T, T2>;
  override connect<T2>(
    other: DataStream<T2> | BroadcastStream<T2>,
  ): ConnectedStreams<T, T2> | KeyedConnectedStreams<T, T2, K> | KeyedBroadcastConnectedStream<T, T2, K> {
    if (other instanceof BroadcastStream) return new KeyedBroadcastConnectedStream(this, other);
    return other instanceof KeyedStream ? ConnectedStreams.ofKeyed(this, other as KeyedStream<T2, K>) : super.connect(other);
  }

  /** An interval join with another keyed stream: `intervalJoin(other).between(lower, upper).process(fn)`. */
  intervalJoin<T2>(other: KeyedStream<T2, K>): IntervalJoin<T, T2, K> {
    return new IntervalJoin(ConnectedStreams.ofKeyed(this, other));
  }

  /**
   * Windows of `size` elements per key: with no `slide`, each fires and empties at its
   * `size`-th element; with one, every `slide` elements fire over the last `size`. As Flink's,
   * they are global windows with count triggers, and fire never at the end of input.
   */
  countWindow(size: number, slide?: number): WindowedStream<T, K> {
    return countWindowOf(this.window(GlobalWindows.create()), size, slide);
  }
}

/** A keyed stream cut into windows (Flink's `WindowedStream<T, K, W>`). */
export class WindowedStream<T, K> {
  private allowedLatenessMs = 0;
  private lateDataTag: OutputTag<T> | undefined;
  private customTrigger: Trigger<T> | undefined;
  private windowEvictor: Evictor<T> | undefined;

  constructor(
    private readonly keyedStream: KeyedStream<T, K>,
    private readonly assigner: WindowAssigner,
  ) {}

  /** Keeps windows open for late elements this long past their end; each late element fires the window again. */
  allowedLateness(ms: number): this {
    if (!Number.isInteger(ms) || ms < 0) throw new Error(`Allowed lateness must be a whole number of milliseconds ≥ 0, not ${ms}`);
    if (ms > 0 && this.assigner.timeDomain === 'processing-time') {
      throw new Error('Allowed lateness applies to event-time windows only; remove allowedLateness or use event time');
    }
    this.allowedLatenessMs = ms;
    return this;
  }

  /** Sends elements too late for any window to a side output instead of dropping them. */
  sideOutputLateData(tag: OutputTag<T>): this {
    this.lateDataTag = tag;
    return this;
  }

  /** Replaces the assigner's default trigger, which decides when windows fire and purge. */
  trigger(trigger: Trigger<T>): this {
    if (this.assigner.merging && !(trigger.canMerge?.() ?? false)) {
      throw new Error(
        `${describeStrategy(trigger, 'This trigger')} cannot be used with ${this.assigner.describe()}: merging windows need a trigger ` +
          `whose canMerge() is true and that has onMerge`,
      );
    }
    this.customTrigger = trigger;
    return this;
  }

  /**
   * Removes elements from a window before or after its function runs. The window then keeps
   * its elements, and `reduce` and `aggregate` run over them at each firing, as in Flink.
   */
  evictor(evictor: Evictor<T>): this {
    this.windowEvictor = evictor;
    return this;
  }

  reduce<R = T>(fn: ReduceFunction<T>, windowFunction?: ProcessWindowFunction<T, R, K>): SingleOutputStreamOperator<R, number> {
    return this.build<R>('reduce', reduceWindowFunction(fn, windowFunction));
  }

  aggregate<ACC, V, R = V>(
    fn: AggregateFunction<T, ACC, V>,
    windowFunction?: ProcessWindowFunction<V, R, K>,
  ): SingleOutputStreamOperator<R, number> {
    if (this.assigner.merging && !fn.merge) {
      throw new Error('An AggregateFunction over session windows needs merge(a, b): sessions merge their accumulators');
    }
    return this.build<R>('aggregate', aggregateWindowFunction(fn, windowFunction));
  }

  process<R>(fn: ProcessWindowFunction<T, R, K>): SingleOutputStreamOperator<R, number> {
    return this.build<R>('process', processWindowFunction(fn));
  }

  sum(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.byField('sum', field);
  }

  min(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.byField('min', field);
  }

  max(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.byField('max', field);
  }

  /** The window's element with the smallest `field`; on a tie the first one, or with `first` false the last (as Flink). */
  minBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, number> {
    return this.byField('minBy', field, first);
  }

  /** The window's element with the largest `field`; on a tie the first one, or with `first` false the last (as Flink). */
  maxBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, number> {
    return this.byField('maxBy', field, first);
  }

  private byField(aggregation: FieldAggregation, field: string, first = true): SingleOutputStreamOperator<T, number> {
    return this.build<T>(`${aggregation}('${field}'${first ? '' : ', false'})`, reduceWindowFunction(fieldAggregation<T>(aggregation, field, first)));
  }

  private build<R>(what: string, fn: WindowFunctionSpec): SingleOutputStreamOperator<R, number> {
    const { assigner, allowedLatenessMs, lateDataTag, customTrigger, windowEvictor: evictor } = this;
    const lateness = allowedLatenessMs > 0 ? `, allowed lateness ${allowedLatenessMs} ms` : '';
    const trigger = customTrigger ? `, ${describeStrategy(customTrigger, 'custom trigger')}` : '';
    const evicting = evictor ? `, ${describeStrategy(evictor, 'custom evictor')}` : '';
    // A window's results carry its last millisecond as their timestamp, in either time domain.
    return this.keyedStream.addOperator<R, number>({
      keyed: true,
      operatorKind: 'window',
      description: `${assigner.describe()}${lateness}${trigger}${evicting}, ${what}`,
      eventTime: assigner.timeDomain === 'event-time',
      factory: () =>
        new WindowOperator({
          assigner,
          trigger: (customTrigger) ?? assigner.defaultTrigger(),
          defaultTrigger: customTrigger === undefined,
          evictor: evictor,
          allowedLatenessMs,
          lateDataTag,
          fn,
        }),
    });
  }
}


/** Global windows made count windows, as Flink's `countWindow`: a purging count trigger, or a count trigger and evictor. */
function countWindowOf<W extends { trigger(trigger: Trigger<never>): W; evictor(evictor: Evictor<never>): W }>(windowed: W, size: number, slide?: number): W {
  return slide === undefined
    ? windowed.trigger(PurgingTrigger.of(CountTrigger.of(size)))
    : windowed.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide));
}

/** The one key of `windowAll`'s elements. */
const ALL_ELEMENTS_KEY = 0;

/**
 * A whole stream cut into windows (Flink's `AllWindowedStream<T, W>`): the same windows,
 * triggers and evictors as a keyed stream's, with functions that see no key.
 */
export class AllWindowedStream<T> {
  constructor(private readonly windowed: WindowedStream<T, typeof ALL_ELEMENTS_KEY>) {}

  allowedLateness(ms: number): this {
    this.windowed.allowedLateness(ms);
    return this;
  }

  sideOutputLateData(tag: OutputTag<T>): this {
    this.windowed.sideOutputLateData(tag);
    return this;
  }

  trigger(trigger: Trigger<T>): this {
    this.windowed.trigger(trigger);
    return this;
  }

  evictor(evictor: Evictor<T>): this {
    this.windowed.evictor(evictor);
    return this;
  }

  reduce<R = T>(fn: ReduceFunction<T>, windowFunction?: ProcessAllWindowFunction<T, R>): SingleOutputStreamOperator<R, number> {
    return this.windowed.reduce<R>(fn, windowFunction && withoutKey(windowFunction));
  }

  aggregate<ACC, V, R = V>(fn: AggregateFunction<T, ACC, V>, windowFunction?: ProcessAllWindowFunction<V, R>): SingleOutputStreamOperator<R, number> {
    return this.windowed.aggregate<ACC, V, R>(fn, windowFunction && withoutKey(windowFunction));
  }

  process<R>(fn: ProcessAllWindowFunction<T, R>): SingleOutputStreamOperator<R, number> {
    return this.windowed.process<R>(withoutKey(fn));
  }

  sum(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.windowed.sum(field);
  }

  min(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.windowed.min(field);
  }

  max(field: NumericField<T>): SingleOutputStreamOperator<T, number> {
    return this.windowed.max(field);
  }

  minBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, number> {
    return this.windowed.minBy(field, first);
  }

  maxBy(field: NumericField<T>, first = true): SingleOutputStreamOperator<T, number> {
    return this.windowed.maxBy(field, first);
  }
}

function withoutKey<IN, OUT>(fn: ProcessAllWindowFunction<IN, OUT>): ProcessWindowFunction<IN, OUT, typeof ALL_ELEMENTS_KEY> {
  return (_key, context, elements, out) => fn(context, elements, out);
}
