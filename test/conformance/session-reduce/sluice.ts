import { EventTimeSessionWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumWithLatest } from '../functions.js';

/** Sessions with a 30 ms gap reduced to their sum; a record out of order bridges two sessions into one. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(30))
    .reduce(sumWithLatest)
    .map((event) => `${event.key} ${event.value}`);
