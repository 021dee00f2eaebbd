import { EventTimeSessionWindows, type AggregateFunction, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

const sumCount: AggregateFunction<Event, { sum: number; count: number }, string> = {
  createAccumulator: () => ({ sum: 0, count: 0 }),
  add: (event, accumulator) => ({ sum: accumulator.sum + event.value, count: accumulator.count + 1 }),
  getResult: (accumulator) => `${accumulator.sum}/${accumulator.count}`,
  merge: (a, b) => ({ sum: a.sum + b.sum, count: a.count + b.count }),
};

/** Sessions with a 20 ms gap, aggregated to "sum/count" by an AggregateFunction whose accumulators merge. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(20))
    .aggregate(sumCount);
