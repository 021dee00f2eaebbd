import { OutputTag, SlidingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** The late side output of sliding windows of 100 ms every 50 ms. */
export default (events: DataStream<Event>) => {
  const late = new OutputTag<Event>('late');
  const sums = events
    .keyBy((event) => event.key)
    .window(SlidingEventTimeWindows.of(100, 50))
    .sideOutputLateData(late)
    .sum('value');
  return sums.getSideOutput(late).map((event) => `${event.key} ${event.value} @${event.timestamp}`);
};
