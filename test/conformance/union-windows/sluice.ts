import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Two branches of one stream, small and large values relabelled, unioned and summed per label in 100 ms windows. */
export default (events: DataStream<Event>) => {
  const small = events.filter((event) => event.value < 10).map((event) => ({ ...event, key: 'small' }));
  const large = events.filter((event) => event.value >= 10).map((event) => ({ ...event, key: 'large' }));
  return small
    .union(large)
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .sum('value')
    .map((event, { timestamp }) => `${event.key} ${event.value} ending ${timestamp + 1}`);
};
