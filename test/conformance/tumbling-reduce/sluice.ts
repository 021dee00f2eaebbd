import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumWithLatest } from '../functions.js';

/** Tumbling 100 ms windows reduced to the sum of the values and the latest event time. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .reduce(sumWithLatest)
    .map((event) => `${event.key} ${event.value} latest ${event.timestamp}`);
