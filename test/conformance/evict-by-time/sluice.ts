import { TimeEvictor, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumWithLatest } from '../functions.js';

/** Tumbling 100 ms windows open 50 ms late, reduced over the elements within 30 ms of the newest. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .allowedLateness(50)
    .evictor(TimeEvictor.of(30))
    .reduce(sumWithLatest)
    .map((event) => `${event.key} ${event.value} latest ${event.timestamp}`);
