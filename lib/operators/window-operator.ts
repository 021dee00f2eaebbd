import type {
  AggregateFunction,
  Collector,
  ProcessWindowFunction,
  ReduceFunction,
  RuntimeContext,
  WindowContext,
} from '../api/functions.js';
import type { OutputTag } from '../api/output-tag.js';
import { ValueStateDescriptor, type AnyStateDescriptor, type ValueState } from '../api/state.js';
import { maxTimestamp, type TimeWindow, type WindowAssigner } from '../api/windows.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { runtimeContext, valueState } from './keyed-state.js';
import { StreamOperator, type StreamRecord } from './operator.js';
import type { Timer } from './timers.js';

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
  const withField = (element: T, value: number) => ({ ...element, [field]: value });
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
  readonly allowedLatenessMs: number;
  readonly lateDataTag: OutputTag<unknown> | undefined;
  readonly fn: WindowFunctionSpec;
}

/** Every window of a key with its contents, by window id `start:end`. */
type WindowContents = Record<string, unknown>;
const WINDOWS = new ValueStateDescriptor<WindowContents>('windows');
/** A window function's own state, per window id (`windowState()`) and for the key (`globalState()`), by state id. */
type StateRecord = Record<string, unknown>;
const PER_WINDOW_STATE = new ValueStateDescriptor<Record<string, StateRecord>>('window-state');
const GLOBAL_STATE = new ValueStateDescriptor<StateRecord>('global-state');

function windowId({ start, end }: TimeWindow): string {
  return `${start}:${end}`;
}

function parseWindowId(id: string): TimeWindow {
  const [start, end] = id.split(':').map(Number);
  return { start: start ?? 0, end: end ?? 0 };
}

function intersects(a: TimeWindow, b: TimeWindow): boolean {
  return a.start <= b.end && a.end >= b.start;
}

/**
 * Keyed windows with Flink's default triggers: an event-time window fires when the
 * watermark passes its last millisecond, and again for every late element within the
 * allowed lateness; its state is dropped once the watermark passes end + lateness. A
 * processing-time window fires when the clock passes its end. Session windows merge when
 * they overlap, merging their contents.
 */
export class WindowOperator extends StreamOperator {
  private readonly eventTime: boolean;

  constructor(private readonly options: WindowOperatorOptions) {
    super();
    this.eventTime = options.assigner.timeDomain === 'event-time';
  }

  override describeState(): AnyStateDescriptor[] {
    return [WINDOWS];
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

  private timers() {
    return this.eventTime ? this.services.eventTimers : this.services.processingTimers;
  }

  private timer(timestamp: number, window: TimeWindow): Timer {
    return { key: this.services.currentKey(), timestamp, namespace: windowId(window) };
  }

  private deleteTimers(window: TimeWindow): void {
    this.timers().delete(this.timer(maxTimestamp(window), window));
    this.timers().delete(this.timer(this.cleanupTime(window), window));
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
    const assigned = this.options.assigner.assignWindows(timestamp);
    let accepted = false;
    for (const assignedWindow of assigned) {
      // As Flink's WindowOperator: merge first, then judge lateness on the merged window, so
      // that an element whose own session is late still joins an open session it overlaps. A
      // late window never merges (an open session ends later), so skipping it leaves nothing behind.
      const window = this.options.assigner.merging ? this.mergeInto(contents, assignedWindow) : assignedWindow;
      if (this.isWindowLate(window)) continue;
      accepted = true;
      const id = windowId(window);
      // A window the key has already has its timers; a merged session's were deleted, so it registers them anew.
      const hasTimers = !this.options.assigner.merging && id in contents;
      contents[id] = this.call(() => this.options.fn.add(contents[id], record.value));
      // As Flink's EventTimeTrigger: a window whose end the watermark has passed fires at once
      // (a late element within the allowed lateness); otherwise a timer fires it later.
      if (this.eventTime && maxTimestamp(window) <= this.watermark) this.fire(window, contents[id]);
      else if (!hasTimers) this.timers().register(this.timer(maxTimestamp(window), window));
      if (!hasTimers) this.timers().register(this.timer(this.cleanupTime(window), window));
    }
    if (accepted) {
      state.update(contents);
    } else if (this.options.lateDataTag) {
      this.output.side(this.options.lateDataTag, { value: record.value, timestamp: record.timestamp });
    } else {
      this.services.metrics.lateRecordsDropped = (this.services.metrics.lateRecordsDropped ?? 0) + 1;
    }
  }

  /** Merges `window` with every overlapping session of the key; returns the merged window. */
  private mergeInto(contents: WindowContents, window: TimeWindow): TimeWindow {
    let merged = window;
    const overlapping = Object.keys(contents)
      .map(parseWindowId)
      .filter((existing) => intersects(existing, window))
      .sort((a, b) => a.start - b.start);
    for (const existing of overlapping) {
      merged = { start: Math.min(merged.start, existing.start), end: Math.max(merged.end, existing.end) };
    }
    let mergedContents: unknown = undefined;
    for (const existing of overlapping) {
      const id = windowId(existing);
      const part = contents[id];
      mergedContents = mergedContents === undefined ? part : this.call(() => this.options.fn.merge(mergedContents, part));
      delete contents[id];
      this.deleteTimers(existing);
    }
    if (mergedContents !== undefined) contents[windowId(merged)] = mergedContents;
    return merged;
  }

  /**
   * A window function's state, kept in one of the operator's own values for the key: every
   * state the function opens there lives in that value's record, under its usual id.
   */
  private nestedState(read: () => StateRecord, write: (record: StateRecord) => void): RuntimeContext {
    const state: KeyedStateBackend = {
      get: (stateId) => read()[stateId],
      put: (stateId, _key, value) => write({ ...read(), [stateId]: value }),
      remove: (stateId) => {
        const { [stateId]: _removed, ...rest } = read();
        write(rest);
      },
    };
    return runtimeContext({ ...this.services, state });
  }

  private windowStateOf(window: TimeWindow): RuntimeContext {
    if (this.options.assigner.merging) {
      throw new Error(`${this.services.operatorName}: per-window state is not allowed when using merging windows (as in Flink); use globalState()`);
    }
    const id = windowId(window);
    return this.nestedState(
      () => valueState(this.services, PER_WINDOW_STATE).value()?.[id] ?? {},
      (record) => this.setWindowState(id, record),
    );
  }

  /** Sets one window's record of the function's state; an empty record drops it. */
  private setWindowState(id: string, record: StateRecord): void {
    const perWindow = valueState(this.services, PER_WINDOW_STATE);
    const all = perWindow.value() ?? {};
    const empty = Object.keys(record).length === 0;
    // Nothing to drop: no write, so that a window without such state costs none at its cleanup.
    if (empty && !(id in all)) return;
    const { [id]: _old, ...others } = all;
    const next = empty ? others : { ...others, [id]: record };
    if (Object.keys(next).length === 0) perWindow.clear();
    else perWindow.update(next);
  }

  private globalStateOf(): RuntimeContext {
    const global = valueState(this.services, GLOBAL_STATE);
    return this.nestedState(
      () => global.value() ?? {},
      (record) => (Object.keys(record).length === 0 ? global.clear() : global.update(record)),
    );
  }

  private fire(window: TimeWindow, contents: unknown): void {
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
    this.call(() => this.options.fn.emit(key.value, context, contents, out));
  }

  protected override onTimer(timer: Timer): void {
    const window = parseWindowId(timer.namespace);
    const state = this.windows();
    const contents = state.value();
    const id = timer.namespace;
    if (!contents || !(id in contents)) return;
    if (timer.timestamp === maxTimestamp(window)) this.fire(window, contents[id]);
    if (timer.timestamp === this.cleanupTime(window)) {
      delete contents[id];
      if (Object.keys(contents).length === 0) state.clear();
      else state.update(contents);
      // The window function's state of the window goes with it.
      this.setWindowState(id, {});
    }
  }
}
