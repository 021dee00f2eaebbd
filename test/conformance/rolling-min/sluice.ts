import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** keyBy(key).min('value'): the smallest value so far, in the first record's other fields (unlike minBy). */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .min('value')
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
