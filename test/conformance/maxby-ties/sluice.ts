import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Tumbling 100 ms windows, maxBy('value', false): the whole winning element, the last of a tie. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .maxBy('value', false)
    .map((event) => `${event.key} ${event.value} from ${event.timestamp}`);
