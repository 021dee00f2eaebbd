import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** keyBy(key).max('value'): the largest value so far, in the first record's other fields (unlike maxBy). */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .max('value')
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
