import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** A ProcessWindowFunction over every element of 100 ms windows: count, sum and the latest event time. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .process<string>((key, context, elements, out) => {
      const sum = elements.reduce((total, event) => total + event.value, 0);
      const latest = Math.max(...elements.map((event) => event.timestamp));
      out.collect(`${key} [${context.window.start},${context.window.end}) count ${elements.length} sum ${sum} latest ${latest}`);
    });
