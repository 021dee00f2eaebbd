import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { values } from '../functions.js';

/** Sliding count windows: every 2 elements of a key, the last 4 (a count trigger and a count evictor). */
export default (events: DataStream<Event>) => events.keyBy((event) => event.key).countWindow(4, 2).process(values);
