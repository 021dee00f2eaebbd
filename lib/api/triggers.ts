import {
  ReducingStateDescriptor,
  ValueStateDescriptor,
  type ListState,
  type ListStateDescriptor,
  type MapState,
  type MapStateDescriptor,
  type ReducingState,
  type ValueState,
} from './state.js';
import type { TimeWindow } from './windows.js';

/** What a trigger decides for its window, as Flink's `TriggerResult`. */
export const TriggerResult = {
  /** Nothing happens to the window. */
  CONTINUE: 'CONTINUE',
  /** The window function runs over the window's contents, which stay. */
  FIRE: 'FIRE',
  /** The window's contents are dropped; its trigger state and per-window state stay until its cleanup. */
  PURGE: 'PURGE',
  FIRE_AND_PURGE: 'FIRE_AND_PURGE',
} as const;
export type TriggerResult = (typeof TriggerResult)[keyof typeof TriggerResult];

export function isFire(result: TriggerResult): boolean {
  return result === TriggerResult.FIRE || result === TriggerResult.FIRE_AND_PURGE;
}

export function isPurge(result: TriggerResult): boolean {
  return result === TriggerResult.PURGE || result === TriggerResult.FIRE_AND_PURGE;
}

/**
 * What a trigger may do for the key and window it is called for: read the clocks, set and
 * delete timers (which call it back with that window), and keep state of its own per window.
 */
export interface TriggerContext {
  getCurrentProcessingTime(): number;
  getCurrentWatermark(): number;
  registerProcessingTimeTimer(time: number): void;
  registerEventTimeTimer(time: number): void;
  deleteProcessingTimeTimer(time: number): void;
  deleteEventTimeTimer(time: number): void;
  /** State of this key in this window; cleared with the window unless `clear` clears it first. */
  getPartitionedState<T>(descriptor: ReducingStateDescriptor<T>): ReducingState<T>;
  getPartitionedState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  getPartitionedState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  getPartitionedState<K extends string | number, V>(descriptor: MapStateDescriptor<K, V>): MapState<K, V>;
}

/** The context of `onMerge`: the window is the merged one. */
export interface OnMergeContext extends TriggerContext {
  /** Folds this state of every window merged into the merged window's (reducing and list state merge). */
  mergePartitionedState<T>(descriptor: ReducingStateDescriptor<T> | ListStateDescriptor<T>): void;
}

/**
 * Decides when a window fires and when its contents are dropped, as Flink's `Trigger<T, W>`.
 * Every window has one; `window(assigner)` starts with the assigner's default (event-time
 * windows fire when the watermark passes their end, processing-time ones on the clock, the
 * global window never), and `trigger(...)` replaces it.
 */
export interface Trigger<T = unknown, W = TimeWindow> {
  /** Called for every element added to the window. */
  onElement(element: T, timestamp: number, window: W, context: TriggerContext): TriggerResult;
  /** Called when an event-time timer this trigger set for the window fires. */
  onEventTime(time: number, window: W, context: TriggerContext): TriggerResult;
  /** Called when a processing-time timer this trigger set for the window fires. */
  onProcessingTime(time: number, window: W, context: TriggerContext): TriggerResult;
  /** Whether the trigger works with merging (session) windows; then it must have `onMerge`. */
  canMerge?(): boolean;
  /** Called when windows merged into `window`: merge the state of theirs, and set its timers. */
  onMerge?(window: W, context: OnMergeContext): void;
  /** The window is dropped: delete the timers and state the trigger keeps for it. */
  clear(window: W, context: TriggerContext): void;
  /** Its name in `sluice explain`, as Flink's `toString()`. */
  toString?(): string;
}

/** How far two elements are apart, for {@link DeltaTrigger} and `DeltaEvictor`. */
export type DeltaFunction<T> = (oldElement: T, newElement: T) => number;

const positiveCount = (what: string, n: number) => {
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${what} must be a positive whole number, not ${n}`);
  return n;
};

/** Fires when the watermark passes the window's end (and at once for an element after it). */
export const EventTimeTrigger = {
  create(): Trigger {
    return {
      onElement(_element, _timestamp, window, context) {
        if (window.end - 1 <= context.getCurrentWatermark()) return TriggerResult.FIRE;
        context.registerEventTimeTimer(window.end - 1);
        return TriggerResult.CONTINUE;
      },
      onEventTime: (time, window) => (time === window.end - 1 ? TriggerResult.FIRE : TriggerResult.CONTINUE),
      onProcessingTime: () => TriggerResult.CONTINUE,
      canMerge: () => true,
      onMerge(window, context) {
        // A merged window the watermark has passed fires on the element that merged it.
        if (window.end - 1 > context.getCurrentWatermark()) context.registerEventTimeTimer(window.end - 1);
      },
      clear: (window, context) => context.deleteEventTimeTimer(window.end - 1),
      toString: () => 'EventTimeTrigger()',
    };
  },
};

/** Fires when the clock passes the window's end. */
export const ProcessingTimeTrigger = {
  create(): Trigger {
    return {
      onElement(_element, _timestamp, window, context) {
        context.registerProcessingTimeTimer(window.end - 1);
        return TriggerResult.CONTINUE;
      },
      onEventTime: () => TriggerResult.CONTINUE,
      onProcessingTime: () => TriggerResult.FIRE,
      canMerge: () => true,
      onMerge(window, context) {
        if (window.end - 1 > context.getCurrentProcessingTime()) context.registerProcessingTimeTimer(window.end - 1);
      },
      clear: (window, context) => context.deleteProcessingTimeTimer(window.end - 1),
      toString: () => 'ProcessingTimeTrigger()',
    };
  },
};

/** Never fires: the default of `GlobalWindows`, whose windows fire only by another trigger. */
export const NeverTrigger = {
  create(): Trigger {
    return {
      onElement: () => TriggerResult.CONTINUE,
      onEventTime: () => TriggerResult.CONTINUE,
      onProcessingTime: () => TriggerResult.CONTINUE,
      canMerge: () => true,
      onMerge: () => undefined,
      clear: () => undefined,
      toString: () => 'NeverTrigger()',
    };
  },
};

/** Fires each time the window has taken `maxCount` more elements. */
export const CountTrigger = {
  of<W = TimeWindow>(maxCount: number): Trigger<unknown, W> {
    positiveCount('A CountTrigger count', maxCount);
    const count = new ReducingStateDescriptor<number>('count', (a, b) => a + b);
    return {
      onElement(_element, _timestamp, _window, context) {
        const counted = context.getPartitionedState(count);
        counted.add(1);
        if ((counted.get() ?? 0) < maxCount) return TriggerResult.CONTINUE;
        counted.clear();
        return TriggerResult.FIRE;
      },
      onEventTime: () => TriggerResult.CONTINUE,
      onProcessingTime: () => TriggerResult.CONTINUE,
      canMerge: () => true,
      onMerge: (_window, context) => context.mergePartitionedState(count),
      clear: (_window, context) => context.getPartitionedState(count).clear(),
      toString: () => `CountTrigger(${maxCount})`,
    };
  },
};

/** Makes another trigger purge the window's contents whenever it fires (FIRE becomes FIRE_AND_PURGE). */
export const PurgingTrigger = {
  of<T, W>(nested: Trigger<T, W>): Trigger<T, W> {
    const purging = (result: TriggerResult) => (isFire(result) ? TriggerResult.FIRE_AND_PURGE : result);
    return {
      onElement: (element, timestamp, window, context) => purging(nested.onElement(element, timestamp, window, context)),
      onEventTime: (time, window, context) => purging(nested.onEventTime(time, window, context)),
      onProcessingTime: (time, window, context) => purging(nested.onProcessingTime(time, window, context)),
      canMerge: () => nested.canMerge?.() ?? false,
      onMerge: (window, context) => nested.onMerge?.(window, context),
      clear: (window, context) => nested.clear(window, context),
      toString: () => `PurgingTrigger(${describeStrategy(nested, 'custom trigger')})`,
    };
  },
};

/**
 * Fires every `interval` of the time domain's clock while the window is open (its first firing
 * at the end of the interval the first element falls in), and at the window's end.
 */
function continuous(domain: 'event-time' | 'processing-time', interval: number): Trigger {
  positiveCount(`A continuous ${domain} trigger's interval`, interval);
  const fireAt = new ReducingStateDescriptor<number>('fire-time', (a, b) => Math.min(a, b));
  const eventTime = domain === 'event-time';
  const register = (context: TriggerContext, time: number) =>
    eventTime ? context.registerEventTimeTimer(time) : context.registerProcessingTimeTimer(time);
  const registerNext = (time: number, window: TimeWindow, context: TriggerContext) => {
    const next = Math.min(time + interval, window.end - 1);
    context.getPartitionedState(fireAt).add(next);
    register(context, next);
  };
  const onTimer = (time: number, window: TimeWindow, context: TriggerContext): TriggerResult => {
    if (time === window.end - 1) return TriggerResult.FIRE;
    const due = context.getPartitionedState(fireAt);
    if (due.get() !== time) return TriggerResult.CONTINUE;
    due.clear();
    registerNext(time, window, context);
    return TriggerResult.FIRE;
  };
  return {
    onElement(_element, timestamp, window, context) {
      let time = timestamp;
      if (eventTime) {
        if (window.end - 1 <= context.getCurrentWatermark()) return TriggerResult.FIRE;
        context.registerEventTimeTimer(window.end - 1);
      } else {
        time = context.getCurrentProcessingTime();
      }
      if (context.getPartitionedState(fireAt).get() === undefined) registerNext(time - (time % interval), window, context);
      return TriggerResult.CONTINUE;
    },
    onEventTime: (time, window, context) => (eventTime ? onTimer(time, window, context) : TriggerResult.CONTINUE),
    onProcessingTime: (time, window, context) => (eventTime ? TriggerResult.CONTINUE : onTimer(time, window, context)),
    canMerge: () => true,
    onMerge(_window, context) {
      context.mergePartitionedState(fireAt);
      const next = context.getPartitionedState(fireAt).get();
      if (next !== undefined) register(context, next);
    },
    clear(_window, context) {
      const due = context.getPartitionedState(fireAt);
      const time = due.get();
      if (time === undefined) return;
      if (eventTime) context.deleteEventTimeTimer(time);
      else context.deleteProcessingTimeTimer(time);
      due.clear();
    },
    toString: () => `Continuous${eventTime ? 'EventTime' : 'ProcessingTime'}Trigger(${interval})`,
  };
}

/** Fires every `interval` of event time while the window is open, and when the watermark passes its end. */
export const ContinuousEventTimeTrigger = {
  of: (interval: number): Trigger => continuous('event-time', interval),
};

/** Fires every `interval` of processing time while the window is open, and at its end. */
export const ContinuousProcessingTimeTrigger = {
  of: (interval: number): Trigger => continuous('processing-time', interval),
};

/**
 * Fires when an element is more than `threshold` away from the element of the last firing (the
 * window's first element, before any), by `deltaFunction`.
 */
export const DeltaTrigger = {
  of<T, W = TimeWindow>(threshold: number, deltaFunction: DeltaFunction<T>): Trigger<T, W> {
    const last = new ValueStateDescriptor<T>('last-element');
    return {
      onElement(element, _timestamp, _window, context) {
        const lastElement = context.getPartitionedState(last);
        const previous = lastElement.value();
        if (previous === undefined) {
          lastElement.update(element);
          return TriggerResult.CONTINUE;
        }
        if (deltaFunction(previous, element) <= threshold) return TriggerResult.CONTINUE;
        lastElement.update(element);
        return TriggerResult.FIRE;
      },
      onEventTime: () => TriggerResult.CONTINUE,
      onProcessingTime: () => TriggerResult.CONTINUE,
      clear: (_window, context) => context.getPartitionedState(last).clear(),
      toString: () => `DeltaTrigger(${threshold})`,
    };
  },
};

/** A trigger's or evictor's name for `explain` and errors: its own `toString()`, or `fallback` for one without. */
export function describeStrategy(strategy: { toString?(): string }, fallback: string): string {
  const described = strategy.toString?.() ?? '';
  return described === '' || described.startsWith('[object') ? fallback : described;
}
