import { EventTimeSessionWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Sessions with a 20 ms gap and 50 ms of allowed lateness: a late record within it merges and fires the session again. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(20))
    .allowedLateness(50)
    .process<string>((key, context, elements, out) => {
      const sum = elements.reduce((total, event) => total + event.value, 0);
      out.collect(`${key} [${context.window.start},${context.window.end}) sum ${sum}`);
    });
