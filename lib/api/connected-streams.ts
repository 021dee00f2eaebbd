import { KeyedBroadcastProcessOperator } from '../operators/broadcast-operator.js';
import { IntervalJoinOperator } from '../operators/interval-join-operator.js';
import { MapOperator } from '../operators/basic-operators.js';
import type { StreamOperator } from '../operators/operator.js';
import type {
  BroadcastProcessFunction,
  CoFlatMapFunction,
  CoGroupFunction,
  CoMapFunction,
  CoProcessFunction,
  Collector,
  JoinFunction,
  KeyedBroadcastProcessFunction,
  KeyedCoProcessFunction,
  KeyedProcessFunction,
  KeySelector,
  ProcessJoinFunction,
  ProcessWindowFunction,
  Timestamp,
} from './functions.js';
import { DataStream, type KeyedStream, type SingleOutputStreamOperator, type WindowedStream } from './datastream.js';
import type { OutputTag } from './output-tag.js';
import type { MapStateDescriptor } from './state.js';
import { BROADCAST_KEY, FORWARD_KEY } from './transformations.js';
import type { Evictor } from './evictors.js';
import type { Trigger } from './triggers.js';
import type { WindowAssigner } from './windows.js';

/**
 * An element of two streams brought together, on its way to a two-input function: which input
 * it came from, and the element. Sluice runs two inputs as one: both go through the same
 * operators (and, keyed, the same repartition topic), so that one shard sees both sides of a key.
 */
export type Tagged<IN1, IN2> = { readonly input: 1; readonly value: IN1 } | { readonly input: 2; readonly value: IN2 };

/** Both streams as one of tagged elements; the watermark is the minimum of the two, as Flink's two-input operators take it. */
function tagged<IN1, IN2>(first: DataStream<IN1>, second: DataStream<IN2>): DataStream<Tagged<IN1, IN2>> {
  const tag = <T>(stream: DataStream<T>, input: 1 | 2) =>
    stream.addOperator<Tagged<IN1, IN2>>({
      operatorKind: 'connect',
      description: `input ${input} of connected streams`,
      factory: () => new MapOperator((value: unknown) => ({ input, value }) as Tagged<IN1, IN2>),
    });
  return tag(first, 1).union(tag(second, 2));
}

/** The stream a keyed stream was keyed from, and its key selector: connected inputs are keyed together instead. */
function unkeyed<T, K>(keyed: KeyedStream<T, K>): { stream: DataStream<T>; key: KeySelector<T, K> } {
  const transformation = keyed.transformation;
  const [input] = transformation.inputs;
  if (transformation.kind !== 'keyBy' || !input) throw new Error('connect: a keyed stream must come straight from keyBy(...)');
  return { stream: new DataStream<T>(keyed.getExecutionEnvironment(), input), key: transformation.keySelector as KeySelector<T, K> };
}

/** Two streams of possibly different types, for one function of two inputs (Flink's `ConnectedStreams<IN1, IN2>`). */
export class ConnectedStreams<IN1, IN2> {
  constructor(
    private readonly first: DataStream<IN1>,
    private readonly second: DataStream<IN2>,
  ) {}

  map<R>(fn: CoMapFunction<IN1, IN2, R>): SingleOutputStreamOperator<R> {
    return tagged(this.first, this.second).map((element, context) => (element.input === 1 ? fn.map1(element.value, context) : fn.map2(element.value, context)));
  }

  flatMap<R>(fn: CoFlatMapFunction<IN1, IN2, R>): SingleOutputStreamOperator<R> {
    return tagged(this.first, this.second).flatMap((element, context) =>
      element.input === 1 ? fn.flatMap1(element.value, context) : fn.flatMap2(element.value, context),
    );
  }

  /** A function of both inputs with side outputs; for state and timers, `keyBy` first. */
  process<R>(fn: CoProcessFunction<IN1, IN2, R>): SingleOutputStreamOperator<R> {
    return tagged(this.first, this.second).process<R>({
      processElement: (element, context, out) =>
        element.input === 1 ? fn.processElement1(element.value, context, out) : fn.processElement2(element.value, context, out),
    });
  }

  /** Keys both inputs, each by its own selector, so that the elements of a key meet in one place with its state. */
  keyBy<K>(key1: KeySelector<IN1, K>, key2: KeySelector<IN2, K>): KeyedConnectedStreams<IN1, IN2, K> {
    return new KeyedConnectedStreams(this.first, this.second, key1, key2);
  }

  /** @internal For keyed streams' `connect`. */
  static ofKeyed<IN1, IN2, K>(first: KeyedStream<IN1, K>, second: KeyedStream<IN2, K>): KeyedConnectedStreams<IN1, IN2, K> {
    const one = unkeyed(first);
    const two = unkeyed(second);
    return new KeyedConnectedStreams(one.stream, two.stream, one.key, two.key);
  }
}

/** Connected streams keyed alike: a `KeyedCoProcessFunction` sees both inputs of a key with its state and timers. */
export class KeyedConnectedStreams<IN1, IN2, K> {
  constructor(
    private readonly first: DataStream<IN1>,
    private readonly second: DataStream<IN2>,
    private readonly key1: KeySelector<IN1, K>,
    private readonly key2: KeySelector<IN2, K>,
  ) {}

  /** @internal Both inputs as one stream of tagged elements, keyed by each input's selector. */
  keyed(): KeyedStream<Tagged<IN1, IN2>, K> {
    const { key1, key2 } = this;
    return tagged(this.first, this.second).keyBy((element) => (element.input === 1 ? key1(element.value) : key2(element.value)));
  }

  process<R, S = void>(fn: KeyedCoProcessFunction<K, IN1, IN2, R, S>): SingleOutputStreamOperator<R> {
    const both: KeyedProcessFunction<K, Tagged<IN1, IN2>, R, S> = {
      processElement: (element, context, out) =>
        element.input === 1 ? fn.processElement1(element.value, context, out) : fn.processElement2(element.value, context, out),
      ...(fn.open ? { open: fn.open.bind(fn) } : {}),
      ...(fn.onTimer ? { onTimer: fn.onTimer.bind(fn) } : {}),
    };
    return this.keyed().process<R, S>(both);
  }
}

/** A stream whose every element reaches every shard of what it connects to, with the states it fills (Flink's `BroadcastStream<T>`). */
export class BroadcastStream<T> {
  constructor(
    /** @internal */ readonly stream: DataStream<T>,
    /** @internal */ readonly descriptors: readonly MapStateDescriptor<string | number, unknown>[],
  ) {
    if (descriptors.length === 0) throw new Error('broadcast(...) takes the MapStateDescriptor of each broadcast state it fills');
  }
}

/**
 * Both sides through one repartition topic to a new stage, which runs `operator`: the first
 * side's elements by their key or forward, and each broadcast element to every partition.
 */
function connectBroadcast<IN1, IN2, R>(
  stream: DataStream<IN1>,
  broadcast: BroadcastStream<IN2>,
  first: { key: KeySelector<IN1, unknown>; routing: 'keyed' | 'forward' },
  operator: { kind: string; function: string; factory: (maxParallelism: number) => StreamOperator },
): SingleOutputStreamOperator<R> {
  const env = stream.getExecutionEnvironment();
  const transformation = env.addTransformation({
    kind: 'keyBy',
    name: 'keyBy',
    inputs: [tagged(stream, broadcast.stream).transformation],
    keySelector: (element) => {
      const { input, value } = element as Tagged<IN1, IN2>;
      return input === 1 ? first.key(value) : BROADCAST_KEY;
    },
    broadcast: first.routing,
  });
  return new DataStream<Tagged<IN1, IN2>>(env, transformation).addOperator<R, Timestamp>({
    operatorKind: operator.kind,
    description: `${operator.function}, broadcast state ${broadcast.descriptors.map((d) => d.name).join(', ')}`,
    keyed: true,
    factory: () => operator.factory(env.getMaxParallelism()),
  });
}

/**
 * A non-keyed stream connected with a broadcast stream (Flink's `BroadcastConnectedStream` over a
 * `DataStream`). Its elements stay with the shard their record came from, as Flink forwards them
 * to the same subtask: each crosses the repartition topic to the partition whose number is its
 * record's, where the shard's copy of the broadcast state is read.
 */
export class BroadcastConnectedStream<IN1, IN2> {
  constructor(
    private readonly stream: DataStream<IN1>,
    protected readonly broadcast: BroadcastStream<IN2>,
  ) {}

  /** Runs `fn` over both: each broadcast element once on every shard, to write the broadcast state; each other element once, to read it. */
  process<R>(fn: BroadcastProcessFunction<IN1, IN2, R>): SingleOutputStreamOperator<R> {
    const descriptors = this.broadcast.descriptors;
    const onShard: KeyedBroadcastProcessFunction<string, IN1, IN2, R> = {
      processElement: (value, { timestamp, output, currentWatermark, currentProcessingTime, getBroadcastState }, out) =>
        fn.processElement(value, { timestamp, output, currentWatermark, currentProcessingTime, getBroadcastState }, out),
      processBroadcastElement: (value, context, out) => fn.processBroadcastElement(value, context, out),
    };
    return connectBroadcast(this.stream, this.broadcast, { key: () => FORWARD_KEY, routing: 'forward' }, {
      kind: 'broadcastProcess',
      function: 'broadcast process function',
      factory: (maxParallelism) => new KeyedBroadcastProcessOperator(onShard, descriptors, maxParallelism),
    });
  }
}

/** A keyed stream connected with a broadcast stream (Flink's `BroadcastConnectedStream` over a `KeyedStream`). */
export class KeyedBroadcastConnectedStream<IN1, IN2, K> extends BroadcastConnectedStream<IN1, IN2> {
  constructor(
    private readonly keyed: KeyedStream<IN1, K>,
    broadcast: BroadcastStream<IN2>,
  ) {
    super(keyed, broadcast);
  }

  /**
   * Runs `fn` over both: each broadcast element once on every shard, with the broadcast state
   * to write; each keyed element with its key's state and timers, and the broadcast state to read.
   */
  override process<R, S = void>(fn: KeyedBroadcastProcessFunction<K, IN1, IN2, R, S>): SingleOutputStreamOperator<R> {
    const { stream, key } = unkeyed(this.keyed);
    const descriptors = this.broadcast.descriptors;
    return connectBroadcast(stream, this.broadcast, { key, routing: 'keyed' }, {
      kind: 'keyedBroadcastProcess',
      function: 'keyed broadcast process function',
      factory: (maxParallelism) => new KeyedBroadcastProcessOperator(fn, descriptors, maxParallelism),
    });
  }
}

/** `left.intervalJoin(right)`: pick the bounds next (Flink's `KeyedStream.IntervalJoin`). */
export class IntervalJoin<IN1, IN2, K> {
  constructor(private readonly streams: KeyedConnectedStreams<IN1, IN2, K>) {}

  /**
   * Joins each left element at time t with the right elements at times in [t + lower, t + upper]
   * of the same key (both bounds inclusive unless made exclusive).
   */
  between(lower: number, upper: number): IntervalJoined<IN1, IN2, K> {
    if (!Number.isInteger(lower) || !Number.isInteger(upper)) throw new Error(`Interval join bounds are whole milliseconds, not ${lower} and ${upper}`);
    if (lower > upper) throw new Error(`An interval join's lower bound (${lower} ms) must not exceed its upper bound (${upper} ms)`);
    return new IntervalJoined(this.streams, lower, upper);
  }
}

export class IntervalJoined<IN1, IN2, K> {
  private lowerExclusive = false;
  private upperExclusive = false;
  private leftLate: OutputTag<IN1> | undefined;
  private rightLate: OutputTag<IN2> | undefined;

  constructor(
    private readonly streams: KeyedConnectedStreams<IN1, IN2, K>,
    private readonly lower: number,
    private readonly upper: number,
  ) {}

  lowerBoundExclusive(): this {
    this.lowerExclusive = true;
    return this;
  }

  upperBoundExclusive(): this {
    this.upperExclusive = true;
    return this;
  }

  /** Left elements behind the watermark go here instead of being dropped. */
  sideOutputLeftLateData(tag: OutputTag<IN1>): this {
    this.leftLate = tag;
    return this;
  }

  sideOutputRightLateData(tag: OutputTag<IN2>): this {
    this.rightLate = tag;
    return this;
  }

  /** Calls `fn` for every pair; each result carries the later of the pair's timestamps. */
  process<R>(fn: ProcessJoinFunction<IN1, IN2, R>): SingleOutputStreamOperator<R, number> {
    const lower = this.lower + (this.lowerExclusive ? 1 : 0);
    const upper = this.upper - (this.upperExclusive ? 1 : 0);
    if (lower > upper) throw new Error(`An interval join's bounds leave no interval: [${lower}, ${upper}] ms after making them exclusive`);
    const { leftLate, rightLate } = this;
    return this.streams.keyed().addOperator<R, number>({
      operatorKind: 'intervalJoin',
      description: `interval join, right elements from ${lower} to ${upper} ms after the left one`,
      keyed: true,
      eventTime: true,
      factory: () =>
        new IntervalJoinOperator({
          lower,
          upper,
          fn: fn as ProcessJoinFunction<unknown, unknown, unknown>,
          leftLate: leftLate,
          rightLate: rightLate,
        }),
    });
  }
}

/** The keys of a window join or coGroup, then its window: `where(...).equalTo(...).window(...)`. */
export interface KeysThenWindow<IN1, IN2, W> {
  where<K>(key1: KeySelector<IN1, K>): { equalTo(key2: KeySelector<IN2, K>): { window(assigner: WindowAssigner): W } };
}

function keysThenWindow<IN1, IN2, W>(
  first: DataStream<IN1>,
  second: DataStream<IN2>,
  make: (windowed: WindowedStream<Tagged<IN1, IN2>, unknown>) => W,
): KeysThenWindow<IN1, IN2, W> {
  return {
    where: (key1) => ({
      equalTo: (key2) => ({ window: (assigner) => make(new KeyedConnectedStreams(first, second, key1, key2).keyed().window(assigner)) }),
    }),
  };
}

/**
 * Both inputs' elements of a key in the same window, as Flink's window join and coGroup build
 * them: a window over the two streams tagged and keyed as one, whose function splits them again.
 */
abstract class TwoInputWindow<IN1, IN2> {
  constructor(private readonly windowed: WindowedStream<Tagged<IN1, IN2>, unknown>) {}

  trigger(trigger: Trigger<Tagged<IN1, IN2>>): this {
    this.windowed.trigger(trigger);
    return this;
  }

  evictor(evictor: Evictor<Tagged<IN1, IN2>>): this {
    this.windowed.evictor(evictor);
    return this;
  }

  allowedLateness(ms: number): this {
    this.windowed.allowedLateness(ms);
    return this;
  }

  /** Calls `fn` once per key and window with each input's elements in arrival order. */
  protected coGroup<R>(fn: CoGroupFunction<IN1, IN2, R>): SingleOutputStreamOperator<R, number> {
    const split: ProcessWindowFunction<Tagged<IN1, IN2>, R, unknown> = (_key, _context, elements, out) => {
      const first: IN1[] = [];
      const second: IN2[] = [];
      for (const element of elements) {
        if (element.input === 1) first.push(element.value);
        else second.push(element.value);
      }
      fn(first, second, out);
    };
    return this.windowed.process<R>(split);
  }
}

/** `first.coGroup(second).where(...).equalTo(...).window(...)`, as Flink's `CoGroupedStreams.WithWindow`. */
export class CoGroupedWindow<IN1, IN2> extends TwoInputWindow<IN1, IN2> {
  /** Calls `fn` once per key and window with both inputs' elements (either may be empty). */
  apply<R>(fn: CoGroupFunction<IN1, IN2, R>): SingleOutputStreamOperator<R, number> {
    return this.coGroup(fn);
  }
}

/** `first.join(second).where(...).equalTo(...).window(...)`, as Flink's `JoinedStreams.WithWindow`. */
export class JoinedWindow<IN1, IN2> extends TwoInputWindow<IN1, IN2> {
  /** Calls `fn` for every pair of a first-input and a second-input element of a key and window (an inner join). */
  apply<R>(fn: JoinFunction<IN1, IN2, R>): SingleOutputStreamOperator<R, number> {
    return this.coGroup((first: readonly IN1[], second: readonly IN2[], out: Collector<R>) => {
      for (const one of first) for (const two of second) out.collect(fn(one, two));
    });
  }
}

export function coGroupedStreams<IN1, IN2>(first: DataStream<IN1>, second: DataStream<IN2>): KeysThenWindow<IN1, IN2, CoGroupedWindow<IN1, IN2>> {
  return keysThenWindow(first, second, (windowed) => new CoGroupedWindow(windowed));
}

export function joinedStreams<IN1, IN2>(first: DataStream<IN1>, second: DataStream<IN2>): KeysThenWindow<IN1, IN2, JoinedWindow<IN1, IN2>> {
  return keysThenWindow(first, second, (windowed) => new JoinedWindow(windowed));
}
