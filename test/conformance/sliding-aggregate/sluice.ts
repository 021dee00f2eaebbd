import { SlidingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** Sliding windows of 100 ms every 40 ms, averaged by an AggregateFunction ("sum/count"). */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(SlidingEventTimeWindows.of(100, 40))
    .aggregate(sumCount)
    .map((result, { timestamp }) => `${result} ending ${timestamp + 1}`);
