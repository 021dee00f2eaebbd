import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumWithLatest } from '../functions.js';

/** Count windows of 3 over the whole stream: the sum and latest event time of every 3 elements. */
export default (events: DataStream<Event>) =>
  events
    .countWindowAll(3)
    .reduce(sumWithLatest)
    .map((event) => `${event.key} ${event.value} latest ${event.timestamp}`);
