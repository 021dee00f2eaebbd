import type {
  AggregateFunction,
  Collector,
  ProcessWindowFunction,
  ReduceFunction,
  RuntimeContext,
  WindowContext,
} from '../api/functions.js';
import type { Evictor, EvictorContext, TimestampedValue } from '../api/evictors.js';
import type { OutputTag } from '../api/output-tag.js';
import {
  ValueStateDescriptor,
  type AnyStateDescriptor,
  type ListStateDescriptor,
  type ReducingStateDescriptor,
  type ValueState,
} from '../api/state.js';
import { MAX_WATERMARK } from '../api/time.js';
import { isFire, isPurge, type OnMergeContext, type Trigger, type TriggerContext } from '../api/triggers.js';
import { maxTimestamp, type TimeWindow, type WindowAssigner } from '../api/windows.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { runtimeContext, stateId, valueState } from './keyed-state.js';
import { StreamOperator, type StreamRecord } from './operator.js';
import type { TimeDomain, Timer, TimerQueue } from './timers.js';

/** How a window's contents grow, merge (sessions) and turn into output when it fires. */
export interface WindowFunctionSpec {
  add(contents: unknown, value: unknown): unknown;
  merge(a: unknown, b: unknown): unknown;
  emit(key: unknown, context: WindowContext, contents: unknown, out: Collector<unknown>): void;
}

type AnyWindowFunction = ProcessWindowFunction<unknown, unknown, unknown>;

export function reduceWindowFunction<T, R, K>(
  fn: ReduceFunction<T>,
  windowFunction?: ProcessWindowFunction<T, R, K>,
): WindowFunctionSpec {
  const reduce = fn as ReduceFunction<unknown>;
  const process = windowFunction as AnyWindowFunction | undefined;
  return {
    add: (contents, value) => (contents === undefined ? value : reduce(contents, value)),
    merge: (a, b) => reduce(a, b),
    emit: (key, context, contents, out) => (process ? process(key, context, [contents], out) : out.collect(contents)),
  };
}

export function aggregateWindowFunction<T, ACC, V, R, K>(
  fn: AggregateFunction<T, ACC, V>,
  windowFunction?: ProcessWindowFunction<V, R, K>,
): WindowFunctionSpec {
  const aggregate = fn as unknown as AggregateFunction<unknown, unknown, unknown>;
  const process = windowFunction as AnyWindowFunction | undefined;
  return {
    add: (contents, value) => aggregate.add(value, contents === undefined ? aggregate.createAccumulator() : contents),
    merge: (a, b) => {
      if (!aggregate.merge) throw new Error('Merging windows need AggregateFunction.merge');
      return aggregate.merge(a, b);
    },
    emit: (key, context, contents, out) => {
      const result = aggregate.getResult(contents);
      if (process) process(key, context, [result], out);
      else out.collect(result);
    },
  };
}

export function processWindowFunction<T, R, K>(fn: ProcessWindowFunction<T, R, K>): WindowFunctionSpec {
  const process = fn as AnyWindowFunction;
  return {
    add: (contents, value) => {
      const list = (contents ?? []) as unknown[];
      list.push(value);
      return list;
    },
    merge: (a, b) => [...(a as unknown[]), ...(b as unknown[])],
    emit: (key, context, contents, out) => process(key, context, contents as unknown[], out),
  };
}

export type FieldAggregation = 'sum' | 'min' | 'max' | 'minBy' | 'maxBy';

/**
 * Flink's field aggregations as a reduce: sum/min/max keep the first element's other fields;
 * minBy/maxBy keep the whole element with the extreme value, on a tie the earlier one when
 * `first` (Flink's default) or else the later one.
 */
export function fieldAggregation<T>(aggregation: FieldAggregation, field: string, first = true): ReduceFunction<T> {
  const read = (element: T): number => {
    const value = (element as Record<string, unknown>)[field];
    if (typeof value !== 'number') throw new Error(`${aggregation}('${field}'): the element's ${field} is not a number`);
    return value;
  };
  const withField = (element: T, value: number): T => {
    // Copied, then the field set: a literal that spreads beside a computed key copies on V8's slow path.
    const copy: Record<string, unknown> = Object.assign({}, element);
    copy[field] = value;
    return copy as T;
  };
  switch (aggregation) {
    case 'sum':
      return (a, b) => withField(a, read(a) + read(b));
    case 'min':
      return (a, b) => withField(a, Math.min(read(a), read(b)));
    case 'max':
      return (a, b) => withField(a, Math.max(read(a), read(b)));
    case 'minBy':
      return (a, b) => (read(b) < read(a) || (!first && read(b) === read(a)) ? b : a);
    case 'maxBy':
      return (a, b) => (read(b) > read(a) || (!first && read(b) === read(a)) ? b : a);
  }
}

export interface WindowOperatorOptions {
  readonly assigner: WindowAssigner;
  /** The assigner's default trigger, or the one `trigger(...)` set. */
  readonly trigger: Trigger;
  /** Whether `trigger` is the assigner's default, whose timers a window that has contents already has. */
  readonly defaultTrigger: boolean;
  readonly evictor: Evictor | undefined;
  readonly allowedLatenessMs: number;
  readonly lateDataTag: OutputTag<unknown> | undefined;
  readonly fn: WindowFunctionSpec;
}

/**
 * Every window of a key with its contents, by window id `start:end`. A merging window whose
 * contents were purged stays as null: it is still a session that later elements merge with.
 * With an evictor the contents are the elements themselves, with their timestamps.
 */
type WindowContents = Record<string, unknown>;
const WINDOWS = new ValueStateDescriptor<WindowContents>('windows');
/** The state of a window's function (`windowState()`) or trigger, per window id, by state id; and the function's for the key (`globalState()`). */
type StateRecord = Record<string, unknown>;
const PER_WINDOW_STATE = new ValueStateDescriptor<Record<string, StateRecord>>('window-state');
const TRIGGER_STATE = new ValueStateDescriptor<Record<string, StateRecord>>('trigger-state');
const GLOBAL_STATE = new ValueStateDescriptor<StateRecord>('global-state');

/** An element as a window with an evictor keeps it: its value and, when it has one, its timestamp. */
interface StoredElement {
  v: unknown;
  t?: number;
}

/** The last id built: consecutive elements mostly fall into the same window, and the text is built once for them. */
let lastWindowId = { start: Number.NaN, end: Number.NaN, id: '' };

function windowId({ start, end }: TimeWindow): string {
  if (start !== lastWindowId.start || end !== lastWindowId.end) lastWindowId = { start, end, id: `${start}:${end}` };
  return lastWindowId.id;
}

function parseWindowId(id: string): TimeWindow {
  const [start, end] = id.split(':').map(Number);
  return { start: start ?? 0, end: end ?? 0 };
}

function intersects(a: TimeWindow, b: TimeWindow): boolean {
  return a.start <= b.end && a.end >= b.start;
}

const present = (contents: unknown): boolean => contents !== undefined && contents !== null;

/**
 * Keyed windows as Flink's WindowOperator runs them: each element goes into the windows the
 * assigner gives it (merging sessions first, then judging lateness on the merged window), and
 * the window's trigger decides, on elements and on the timers it sets, when the window function
 * runs and when the contents go. A window's state is dropped at its cleanup time: end + allowed
 * lateness in event time, its end in processing time, never for the global window. With an
 * evictor, as Flink's EvictingWindowOperator, a window keeps its elements and the function runs
 * over what the evictor leaves at each firing.
 */
export class WindowOperator extends StreamOperator {
  private readonly eventTime: boolean;
  private readonly merging: boolean;

  constructor(private readonly options: WindowOperatorOptions) {
    super();
    this.eventTime = options.assigner.timeDomain === 'event-time';
    this.merging = options.assigner.merging;
  }

  override describeState(): AnyStateDescriptor[] {
    return this.options.defaultTrigger ? [WINDOWS] : [WINDOWS, TRIGGER_STATE];
  }

  private windowsState: ValueState<WindowContents> | undefined;

  /** The current key's windows: one accessor serves every record, as it reads the key when used. */
  private windows(): ValueState<WindowContents> {
    return (this.windowsState ??= valueState(this.services, WINDOWS));
  }

  private cleanupTime(window: TimeWindow): number {
    return maxTimestamp(window) + (this.eventTime ? this.options.allowedLatenessMs : 0);
  }

  private isWindowLate(window: TimeWindow): boolean {
    return this.eventTime && this.cleanupTime(window) <= this.watermark;
  }

  private timerQueue(domain: TimeDomain): TimerQueue {
    return domain === 'EVENT_TIME' ? this.services.eventTimers : this.services.processingTimers;
  }

  /** The domain of the window's own end and cleanup. */
  private get windowDomain(): TimeDomain {
    return this.eventTime ? 'EVENT_TIME' : 'PROCESSING_TIME';
  }

  private timer(timestamp: number, window: TimeWindow): Timer {
    return { key: this.services.currentKey(), timestamp, namespace: windowId(window) };
  }

  /** The global window's end is the end of time: nothing to clean up, as Flink sets no timer there. */
  private registerCleanupTimer(window: TimeWindow): void {
    const time = this.cleanupTime(window);
    if (time < MAX_WATERMARK) this.timerQueue(this.windowDomain).register(this.timer(time, window));
  }

  private deleteCleanupTimer(window: TimeWindow): void {
    this.timerQueue(this.windowDomain).delete(this.timer(this.cleanupTime(window), window));
  }

  processElement(record: StreamRecord): void {
    const timestamp = this.eventTime ? record.timestamp : this.services.processingTime();
    if (timestamp === undefined) {
      throw new Error(
        `${this.services.operatorName}: an event-time window got an element without a timestamp; give the source a ` +
          `WatermarkStrategy with timestamps, or use processing-time windows`,
      );
    }
    const state = this.windows();
    const contents: WindowContents = state.value() ?? {};
    let skipped = true;
    for (const assignedWindow of this.options.assigner.assignWindows(timestamp)) {
      // As Flink's WindowOperator: merge first, then judge lateness on the merged window, so
      // that an element whose own session is late still joins an open session it overlaps. A
      // late window never merges (an open session ends later), so skipping it leaves nothing behind.
      const window = this.merging ? this.mergeInto(contents, assignedWindow) : assignedWindow;
      if (this.isWindowLate(window)) continue;
      skipped = false;
      const id = windowId(window);
      const known = present(contents[id]);
      contents[id] = this.call(() => this.added(contents[id], record));
      // The default triggers set the same timers for every element, and fire on one only after
      // the window's end: a window that has contents has its timers, and nothing to do here.
      if (this.options.defaultTrigger && known && !this.merging && !(this.eventTime && maxTimestamp(window) <= this.watermark)) continue;
      const result = this.call(() => this.options.trigger.onElement(record.value, record.timestamp ?? timestamp, window, this.triggerContext(window)));
      if (isFire(result) && present(contents[id])) this.fire(window, contents);
      if (isPurge(result)) this.purge(contents, id);
      this.registerCleanupTimer(window);
    }
    if (!skipped) this.save(contents);
    else if (this.eventTime && (record.timestamp ?? timestamp) + this.options.allowedLatenessMs <= this.watermark) this.late(record);
  }

  private late(record: StreamRecord): void {
    if (this.options.lateDataTag) {
      this.output.side(this.options.lateDataTag, { value: record.value, timestamp: record.timestamp });
    } else {
      this.services.metrics.lateRecordsDropped = (this.services.metrics.lateRecordsDropped ?? 0) + 1;
    }
  }

  private save(contents: WindowContents): void {
    if (Object.keys(contents).length === 0) this.windows().clear();
    else this.windows().update(contents);
  }

  /** A window's contents with the element added: folded in by the window function, or kept whole for the evictor. */
  private added(contents: unknown, record: StreamRecord): unknown {
    if (this.options.evictor) {
      const element: StoredElement = record.timestamp === undefined ? { v: record.value } : { v: record.value, t: record.timestamp };
      return [...((contents ?? []) as StoredElement[]), element];
    }
    return this.options.fn.add(contents ?? undefined, record.value);
  }

  /** Drops a window's contents; a session stays, empty, for later elements to merge with. */
  private purge(contents: WindowContents, id: string): void {
    if (this.merging) contents[id] = null;
    else delete contents[id];
  }

  /**
   * Merges `window` with every overlapping session of the key, as Flink's MergingWindowSet
   * does, and returns the window the element belongs to: the trigger merges its state into the
   * merged window and clears the old ones, whose cleanup timers go.
   */
  private mergeInto(contents: WindowContents, window: TimeWindow): TimeWindow {
    const overlapping = Object.keys(contents)
      .map(parseWindowId)
      .filter((existing) => intersects(existing, window))
      .sort((a, b) => a.start - b.start);
    let merged = window;
    for (const existing of overlapping) {
      merged = { start: Math.min(merged.start, existing.start), end: Math.max(merged.end, existing.end) };
    }
    const [only] = overlapping;
    // A new window inside one session, or beside none, merges nothing.
    if (overlapping.length === 0 || (overlapping.length === 1 && only && windowId(only) === windowId(merged))) return merged;
    const trigger = this.options.trigger;
    this.call(() => trigger.onMerge?.(merged, this.mergeContext(merged, overlapping)));
    const parts: unknown[] = [];
    for (const existing of overlapping) {
      this.call(() => trigger.clear(existing, this.triggerContext(existing)));
      this.deleteCleanupTimer(existing);
      const id = windowId(existing);
      if (present(contents[id])) parts.push(contents[id]);
      delete contents[id];
    }
    contents[windowId(merged)] = parts.length === 0 ? null : parts.reduce((a, b) => this.call(() => this.mergedContents(a, b)));
    return merged;
  }

  private mergedContents(a: unknown, b: unknown): unknown {
    return this.options.evictor ? [...(a as StoredElement[]), ...(b as StoredElement[])] : this.options.fn.merge(a, b);
  }

  /**
   * A function's or trigger's state, kept in one of the operator's own values for the key: every
   * state it opens there lives in that value's record, under its usual id.
   */
  private nestedState(read: () => StateRecord, write: (record: StateRecord) => void): RuntimeContext {
    const state: KeyedStateBackend = {
      get: (id) => read()[id],
      put: (id, _key, value) => write({ ...read(), [id]: value }),
      remove: (id) => {
        const { [id]: _removed, ...rest } = read();
        write(rest);
      },
    };
    return runtimeContext({ ...this.services, state });
  }

  /** A window's record of function or trigger state (per window id in `descriptor`'s value). */
  private windowRecord(descriptor: ValueStateDescriptor<Record<string, StateRecord>>, id: string): RuntimeContext {
    return this.nestedState(
      () => valueState(this.services, descriptor).value()?.[id] ?? {},
      (record) => this.setWindowRecord(descriptor, id, record),
    );
  }

  /** Sets one window's record of function or trigger state; an empty record drops it. */
  private setWindowRecord(descriptor: ValueStateDescriptor<Record<string, StateRecord>>, id: string, record: StateRecord): void {
    const perWindow = valueState(this.services, descriptor);
    const all = perWindow.value() ?? {};
    const empty = Object.keys(record).length === 0;
    // Nothing to drop: no write, so that a window without such state costs none at its cleanup.
    if (empty && !(id in all)) return;
    const { [id]: _old, ...others } = all;
    const next = empty ? others : { ...others, [id]: record };
    if (Object.keys(next).length === 0) perWindow.clear();
    else perWindow.update(next);
  }

  private windowStateOf(window: TimeWindow): RuntimeContext {
    if (this.merging) {
      throw new Error(`${this.services.operatorName}: per-window state is not allowed when using merging windows (as in Flink); use globalState()`);
    }
    return this.windowRecord(PER_WINDOW_STATE, windowId(window));
  }

  private globalStateOf(): RuntimeContext {
    const global = valueState(this.services, GLOBAL_STATE);
    return this.nestedState(
      () => global.value() ?? {},
      (record) => (Object.keys(record).length === 0 ? global.clear() : global.update(record)),
    );
  }

  /**
   * A trigger's context for one window. It is made for every element, so it opens the window's
   * trigger state only when the trigger asks for it (most keep none), and names no function of
   * its own (the bundle keeps function names, a property definition per closure).
   */
  private triggerContext(window: TimeWindow): TriggerContext {
    let state: RuntimeContext | undefined;
    return {
      getCurrentProcessingTime: () => this.services.processingTime(),
      getCurrentWatermark: () => this.watermark,
      registerEventTimeTimer: (time) => this.services.eventTimers.register(this.timer(time, window)),
      registerProcessingTimeTimer: (time) => this.services.processingTimers.register(this.timer(time, window)),
      deleteEventTimeTimer: (time) => this.services.eventTimers.delete(this.timer(time, window)),
      deleteProcessingTimeTimer: (time) => this.services.processingTimers.delete(this.timer(time, window)),
      getPartitionedState: ((descriptor: AnyStateDescriptor): unknown =>
        partitionedState((state ??= this.windowRecord(TRIGGER_STATE, windowId(window))), descriptor)) as TriggerContext['getPartitionedState'],
    };
  }

  /** The merged window's trigger context, which folds the merged windows' trigger state into its own. */
  private mergeContext(merged: TimeWindow, mergedWindows: readonly TimeWindow[]): OnMergeContext {
    const context = this.triggerContext(merged);
    const mergePartitionedState = <T>(descriptor: ReducingStateDescriptor<T> | ListStateDescriptor<T>): void => {
      if (descriptor.ttl) throw new Error(`${this.services.operatorName}: trigger state with a time-to-live does not merge (${descriptor.name})`);
      const id = stateId(this.services, descriptor.name);
      const fold = (a: unknown, b: unknown) =>
        descriptor.kind === 'reducing' ? descriptor.reduceFunction(a as T, b as T) : [...(a as T[]), ...(b as T[])];
      const all = valueState(this.services, TRIGGER_STATE).value() ?? {};
      let folded = all[windowId(merged)]?.[id];
      for (const window of mergedWindows) {
        const part = all[windowId(window)]?.[id];
        if (part !== undefined) folded = folded === undefined ? part : fold(folded, part);
      }
      if (folded === undefined) return;
      this.setWindowRecord(TRIGGER_STATE, windowId(merged), { ...(all[windowId(merged)] ?? {}), [id]: folded });
    };
    return { ...context, mergePartitionedState };
  }

  /** Runs the window function over the window's contents (what the evictor leaves of them), stamped with the window's last millisecond. */
  private fire(window: TimeWindow, contents: WindowContents): void {
    const id = windowId(window);
    const timestamp = maxTimestamp(window);
    const key = this.services.currentKey();
    const context: WindowContext = {
      window,
      currentWatermark: () => this.watermark,
      currentProcessingTime: () => this.services.processingTime(),
      windowState: () => this.windowStateOf(window),
      globalState: () => this.globalStateOf(),
      output: (tag, value) => this.output.side(tag, { value, timestamp }),
    };
    const out: Collector<unknown> = { collect: (value) => this.output.collect({ value, timestamp }) };
    const { evictor, fn } = this.options;
    if (!evictor) {
      this.call(() => fn.emit(key.value, context, contents[id], out));
      return;
    }
    const evictorContext: EvictorContext = { getCurrentProcessingTime: () => this.services.processingTime(), getCurrentWatermark: () => this.watermark };
    const elements = (contents[id] as StoredElement[]).map((stored): TimestampedValue<unknown> => ({ value: stored.v, timestamp: stored.t }));
    const kept = this.call(() => evictor.evictBefore(elements, window, evictorContext));
    const folded = kept.reduce<unknown>((accumulated, element) => this.call(() => fn.add(accumulated, element.value)), undefined);
    this.call(() => fn.emit(key.value, context, folded, out));
    const left = this.call(() => evictor.evictAfter(kept, window, evictorContext));
    if (left.length === 0) this.purge(contents, id);
    else contents[id] = left.map(({ value, timestamp: t }): StoredElement => (t === undefined ? { v: value } : { v: value, t }));
  }

  protected override onTimer(timer: Timer, domain: TimeDomain): void {
    const window = parseWindowId(timer.namespace);
    const id = timer.namespace;
    const contents: WindowContents = this.windows().value() ?? {};
    // A timer of a session merged away since: its trigger was cleared, nothing is left to do.
    if (this.merging && !(id in contents)) return;
    const trigger = this.options.trigger;
    const context = this.triggerContext(window);
    const result = this.call(() =>
      domain === 'EVENT_TIME' ? trigger.onEventTime(timer.timestamp, window, context) : trigger.onProcessingTime(timer.timestamp, window, context),
    );
    // The contents change when an evictor runs, on a purge and at the cleanup: only then are they written.
    let changed = false;
    if (isFire(result) && present(contents[id])) {
      this.fire(window, contents);
      changed = this.options.evictor !== undefined;
    }
    if (isPurge(result) && id in contents) {
      this.purge(contents, id);
      changed = true;
    }
    if (domain === this.windowDomain && timer.timestamp === this.cleanupTime(window)) {
      changed ||= id in contents;
      this.clearAllState(window, contents);
    }
    if (changed) this.save(contents);
  }

  /** The window's cleanup: its contents, its trigger's timers and state, and its function's state go. */
  private clearAllState(window: TimeWindow, contents: WindowContents): void {
    const id = windowId(window);
    delete contents[id];
    this.call(() => this.options.trigger.clear(window, this.triggerContext(window)));
    this.setWindowRecord(TRIGGER_STATE, id, {});
    this.setWindowRecord(PER_WINDOW_STATE, id, {});
  }
}

/** The state a trigger's descriptor opens in its window's record. */
function partitionedState(state: RuntimeContext, descriptor: AnyStateDescriptor): unknown {
  switch (descriptor.kind) {
    case 'value':
      return state.getState(descriptor);
    case 'list':
      return state.getListState(descriptor);
    case 'map':
      return state.getMapState(descriptor);
    case 'reducing':
      return state.getReducingState(descriptor);
  }
}
