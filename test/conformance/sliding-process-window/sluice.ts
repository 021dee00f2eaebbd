import { SlidingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** A ProcessWindowFunction on sliding windows of 60 ms every 20 ms: each window's count and sum. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(SlidingEventTimeWindows.of(60, 20))
    .process<string>((key, context, elements, out) => {
      const sum = elements.reduce((total, event) => total + event.value, 0);
      out.collect(`${key} [${context.window.start},${context.window.end}) count ${elements.length} sum ${sum}`);
    });
