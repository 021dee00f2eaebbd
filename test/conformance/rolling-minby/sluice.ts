import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** keyBy(key).minBy('value'): the whole record with the smallest value so far, the first of a tie. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .minBy('value')
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
