import { CountEvictor, CountTrigger, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { values } from '../functions.js';

/** Tumbling 100 ms windows firing at every second element; after each firing only the last element stays. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .trigger(CountTrigger.of(2))
    .evictor(CountEvictor.of(1, true))
    .process(values);
