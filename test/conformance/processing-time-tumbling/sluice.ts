import { TumblingProcessingTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** 100 ms processing-time windows: each window's key, bounds, sum and count. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingProcessingTimeWindows.of(100))
    .process<string>((key, { window }, elements, out) => {
      const sum = elements.reduce((total, event) => total + event.value, 0);
      out.collect(`${key} [${window.start},${window.end}) sum ${sum} count ${elements.length}`);
    });
