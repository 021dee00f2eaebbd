import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumWithLatest } from '../functions.js';

/** Count windows of 3 per key (global windows, a purging count trigger): the sum and latest event time of each. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .countWindow(3)
    .reduce(sumWithLatest)
    .map((event) => `${event.key} ${event.value} latest ${event.timestamp}`);
