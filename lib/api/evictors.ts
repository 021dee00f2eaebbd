import type { DeltaFunction } from './triggers.js';
import type { TimeWindow } from './windows.js';

/** An element of a window with its event time, as Flink's `TimestampedValue`. */
export interface TimestampedValue<T> {
  readonly value: T;
  /** Undefined for an element that came without one. */
  readonly timestamp: number | undefined;
}

export interface EvictorContext {
  getCurrentProcessingTime(): number;
  getCurrentWatermark(): number;
}

/**
 * Removes elements from a window when it fires, before the window function sees them or after,
 * as Flink's `Evictor<T, W>`. Where Flink's removes through the iterator, this returns the
 * elements it keeps, in their order. A window with an evictor keeps every element until then,
 * so `reduce` and `aggregate` run over the kept elements at each firing instead of as they come.
 */
export interface Evictor<T = unknown, W = TimeWindow> {
  evictBefore(elements: readonly TimestampedValue<T>[], window: W, context: EvictorContext): readonly TimestampedValue<T>[];
  evictAfter(elements: readonly TimestampedValue<T>[], window: W, context: EvictorContext): readonly TimestampedValue<T>[];
  /** Its name in `sluice explain`. */
  toString?(): string;
}

/** One eviction, run before the window function, or after it when `doEvictAfter`. */
function evictor<T>(doEvictAfter: boolean, evict: (elements: readonly TimestampedValue<T>[]) => readonly TimestampedValue<T>[], name: string): Evictor<T, never> {
  return {
    evictBefore: (elements) => (doEvictAfter ? elements : evict(elements)),
    evictAfter: (elements) => (doEvictAfter ? evict(elements) : elements),
    toString: () => name,
  };
}

/** Keeps the last `maxCount` elements. */
export const CountEvictor = {
  of<T = unknown, W = TimeWindow>(maxCount: number, doEvictAfter = false): Evictor<T, W> {
    if (!Number.isInteger(maxCount) || maxCount < 0) throw new Error(`A CountEvictor count must be a whole number ≥ 0, not ${maxCount}`);
    return evictor<T>(doEvictAfter, (elements) => (elements.length <= maxCount ? elements : elements.slice(elements.length - maxCount)), `CountEvictor(${maxCount})`);
  },
};

/**
 * Keeps the elements less than `windowSize` older than the newest (by event time). Elements
 * without a timestamp are all kept, as Flink keeps them.
 */
export const TimeEvictor = {
  of<T = unknown, W = TimeWindow>(windowSize: number, doEvictAfter = false): Evictor<T, W> {
    if (!Number.isInteger(windowSize) || windowSize < 0) throw new Error(`A TimeEvictor window size must be a whole number of milliseconds ≥ 0, not ${windowSize}`);
    return evictor<T>(
      doEvictAfter,
      (elements) => {
        if (elements[0]?.timestamp === undefined) return elements;
        const newest = Math.max(...elements.map((element) => element.timestamp ?? Number.MIN_SAFE_INTEGER));
        return elements.filter((element) => (element.timestamp ?? Number.MIN_SAFE_INTEGER) > newest - windowSize);
      },
      `TimeEvictor(${windowSize})`,
    );
  },
};

/** Removes the elements at least `threshold` away from the last one, by `deltaFunction`. */
export const DeltaEvictor = {
  of<T, W = TimeWindow>(threshold: number, deltaFunction: DeltaFunction<T>, doEvictAfter = false): Evictor<T, W> {
    return evictor<T>(
      doEvictAfter,
      (elements) => {
        const last = elements.at(-1);
        return last === undefined ? elements : elements.filter((element) => deltaFunction(element.value, last.value) < threshold);
      },
      `DeltaEvictor(${threshold})`,
    );
  },
};
