import { SlidingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Sliding windows of 100 ms every 50 ms, sum of the value per key. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(SlidingEventTimeWindows.of(100, 50))
    .sum('value')
    .map((event) => `${event.key} ${event.value}`);
