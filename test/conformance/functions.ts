// Functions that several scenarios share (runner/SumCount.java, runner/SumAtWatermark.java, runner/Values.java and Event.sumWithLatest on the Flink side).
import type { AggregateFunction, DataStream, ProcessWindowFunction } from '../../lib/api/index.js';
import type { Event } from './event.js';

/** "sum/count" of the values, with accumulators that merge (for session windows). */
export const sumCount: AggregateFunction<Event, { sum: number; count: number }, string> = {
  createAccumulator: () => ({ sum: 0, count: 0 }),
  add: (event, accumulator) => ({ sum: accumulator.sum + event.value, count: accumulator.count + 1 }),
  getResult: (accumulator) => `${accumulator.sum}/${accumulator.count}`,
  merge: (a, b) => ({ sum: a.sum + b.sum, count: a.count + b.count }),
};

/** A reduce: the sum of the values and the latest event time. */
export const sumWithLatest = (a: Event, b: Event): Event => ({ key: a.key, value: a.value + b.value, timestamp: Math.max(a.timestamp, b.timestamp) });

/** Each window's key, bounds, sum and the watermark it fired at. */
export const sumAtWatermark: ProcessWindowFunction<Event, string, string> = (key, context, elements, out) => {
  const sum = elements.reduce((total, event) => total + event.value, 0);
  out.collect(`${key} [${context.window.start},${context.window.end}) sum ${sum} at watermark ${context.currentWatermark()}`);
};

/** Each firing's key and the values the window function sees, in order, as Java prints a list. */
export const values: ProcessWindowFunction<Event, string, string> = (key, _context, elements, out) => {
  out.collect(`${key} [${elements.map((event) => event.value).join(', ')}]`);
};

/** A two-input scenario's inputs: events whose key starts with `L-` first, the others second (Event.first on the Flink side). */
export function sides(events: DataStream<Event>): [DataStream<Event>, DataStream<Event>] {
  return [events.filter((event) => event.key.startsWith('L-')), events.filter((event) => !event.key.startsWith('L-'))];
}

/** The key two inputs share: the event's key without its `L-` or `R-`. */
export const sharedKey = (event: Event): string => event.key.slice(2);
