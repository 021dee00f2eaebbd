import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** keyBy(key).sum('value'): every record's running sum, with the first record's other fields. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .sum('value')
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
