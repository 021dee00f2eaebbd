import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Tumbling 100 ms windows over the whole stream, 50 ms late: every element of every key, in order. */
export default (events: DataStream<Event>) =>
  events
    .windowAll(TumblingEventTimeWindows.of(100))
    .allowedLateness(50)
    .process<string>(({ window }, elements, out) => {
      out.collect(`[${window.start},${window.end}) [${elements.map((event) => `${event.key}${event.value}`).join(', ')}]`);
    });
