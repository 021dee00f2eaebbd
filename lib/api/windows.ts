import { MAX_WATERMARK, MIN_WATERMARK } from './time.js';
import { EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, type Trigger } from './triggers.js';

/** A window of time `[start, end)`, as Flink's `TimeWindow`. */
export interface TimeWindow {
  readonly start: number;
  readonly end: number;
}

/** The last millisecond that belongs to the window; window results carry it as their timestamp. */
export function maxTimestamp(window: TimeWindow): number {
  return window.end - 1;
}

/** The start of the window of `size` (shifted by `offset`) that holds `timestamp`. */
export function windowStart(timestamp: number, offset: number, size: number): number {
  return timestamp - ((((timestamp - offset) % size) + size) % size);
}

export interface WindowAssigner {
  readonly kind: 'tumbling' | 'sliding' | 'cumulating' | 'session' | 'global';
  /** The clock its windows end on; the global window never ends, and needs no event time. */
  readonly timeDomain: 'event-time' | 'processing-time';
  /** Session windows merge when they overlap. */
  readonly merging: boolean;
  assignWindows(timestamp: number): TimeWindow[];
  /** The trigger its windows have unless `trigger(...)` sets another. */
  defaultTrigger(): Trigger;
  describe(): string;
}

const defaultTimeTrigger = (timeDomain: WindowAssigner['timeDomain']): Trigger =>
  timeDomain === 'event-time' ? EventTimeTrigger.create() : ProcessingTimeTrigger.create();

function positive(what: string, ms: number): number {
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`${what} must be a positive whole number of milliseconds, not ${ms}`);
  return ms;
}

function tumbling(timeDomain: WindowAssigner['timeDomain'], size: number, offset = 0): WindowAssigner {
  positive('A tumbling window size', size);
  if (Math.abs(offset) >= size) throw new Error(`A window offset must be smaller than the size (${offset} vs ${size})`);
  return {
    kind: 'tumbling',
    timeDomain,
    merging: false,
    assignWindows: (timestamp) => {
      const start = windowStart(timestamp, offset, size);
      return [{ start, end: start + size }];
    },
    defaultTrigger: () => defaultTimeTrigger(timeDomain),
    describe: () => `tumbling ${timeDomain} windows of ${size} ms${offset ? ` (offset ${offset} ms)` : ''}`,
  };
}

function sliding(timeDomain: WindowAssigner['timeDomain'], size: number, slide: number, offset = 0): WindowAssigner {
  positive('A sliding window size', size);
  positive('A sliding window slide', slide);
  if (slide > size) throw new Error(`A sliding window's slide (${slide} ms) must not exceed its size (${size} ms)`);
  return {
    kind: 'sliding',
    timeDomain,
    merging: false,
    assignWindows: (timestamp) => {
      const windows: TimeWindow[] = [];
      for (let start = windowStart(timestamp, offset, slide); start > timestamp - size; start -= slide) {
        windows.push({ start, end: start + size });
      }
      return windows;
    },
    defaultTrigger: () => defaultTimeTrigger(timeDomain),
    describe: () => `sliding ${timeDomain} windows of ${size} ms every ${slide} ms`,
  };
}

/**
 * @internal Flink SQL's CUMULATE windows, which Flink's DataStream API does not have: within
 * each window of `size`, windows that all start at its start and end every `step`.
 */
export function cumulatingEventTimeWindows(size: number, step: number, offset = 0): WindowAssigner {
  positive('A cumulating window size', size);
  positive('A cumulating window step', step);
  if (size % step !== 0) throw new Error(`A cumulating window's size (${size} ms) must be a multiple of its step (${step} ms)`);
  return {
    kind: 'cumulating',
    timeDomain: 'event-time',
    merging: false,
    assignWindows: (timestamp) => {
      const start = windowStart(timestamp, offset, size);
      const windows: TimeWindow[] = [];
      for (let end = start + size; end > timestamp; end -= step) windows.push({ start, end });
      return windows;
    },
    defaultTrigger: () => defaultTimeTrigger('event-time'),
    describe: () => `cumulating event-time windows of ${size} ms every ${step} ms`,
  };
}

function session(timeDomain: WindowAssigner['timeDomain'], gap: number): WindowAssigner {
  positive('A session gap', gap);
  return {
    kind: 'session',
    timeDomain,
    merging: true,
    assignWindows: (timestamp) => [{ start: timestamp, end: timestamp + gap }],
    defaultTrigger: () => defaultTimeTrigger(timeDomain),
    describe: () => `${timeDomain} session windows with a ${gap} ms gap`,
  };
}

export const TumblingEventTimeWindows = {
  of: (size: number, offset?: number) => tumbling('event-time', size, offset),
};
export const TumblingProcessingTimeWindows = {
  of: (size: number, offset?: number) => tumbling('processing-time', size, offset),
};
export const SlidingEventTimeWindows = {
  of: (size: number, slide: number, offset?: number) => sliding('event-time', size, slide, offset),
};
export const SlidingProcessingTimeWindows = {
  of: (size: number, slide: number, offset?: number) => sliding('processing-time', size, slide, offset),
};
export const EventTimeSessionWindows = {
  withGap: (gap: number) => session('event-time', gap),
};
export const ProcessingTimeSessionWindows = {
  withGap: (gap: number) => session('processing-time', gap),
};

/**
 * The one window of all time that every element of a key falls in, as Flink's `GlobalWindow`:
 * its last millisecond is the maximum watermark, so it is never late and never cleaned up.
 */
export const GLOBAL_WINDOW: TimeWindow = { start: MIN_WATERMARK, end: MAX_WATERMARK + 1 };

/**
 * Every element of a key in one window, which never fires unless a trigger says so
 * (`countWindow` sets one), as Flink's `GlobalWindows`.
 */
export const GlobalWindows = {
  create: (): WindowAssigner => ({
    kind: 'global',
    timeDomain: 'processing-time',
    merging: false,
    assignWindows: () => [GLOBAL_WINDOW],
    defaultTrigger: () => NeverTrigger.create(),
    describe: () => 'global windows',
  }),
};
