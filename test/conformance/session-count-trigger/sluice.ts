import { CountTrigger, EventTimeSessionWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Event-time sessions (gap 30 ms) that fire at every third element, counts merged with the sessions. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(30))
    .trigger(CountTrigger.of(3))
    .process<string>((key, { window }, elements, out) => {
      const sum = elements.reduce((total, event) => total + event.value, 0);
      out.collect(`${key} [${window.start},${window.end}) sum ${sum} count ${elements.length}`);
    });
