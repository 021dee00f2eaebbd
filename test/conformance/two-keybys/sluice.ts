import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Two keyBys: per-key 100 ms window sums, then keyed by window end, the largest sum of each window (maxBy). */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .sum('value')
    .map((event, { timestamp }) => ({ key: event.key, value: event.value, timestamp: timestamp + 1 }))
    .keyBy((total) => total.timestamp)
    .maxBy('value')
    .map((total) => `window ending ${total.timestamp}: top ${total.key} ${total.value}`);
