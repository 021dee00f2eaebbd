import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** keyBy(key).maxBy('value', false): the record with the largest value so far, the latest of a tie. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .maxBy('value', false)
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
