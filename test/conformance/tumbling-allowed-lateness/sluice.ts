import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Tumbling 100 ms windows with 50 ms of allowed lateness, sum of the value per key. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .allowedLateness(50)
    .sum('value')
    .map((event) => `${event.key} ${event.value}`);
