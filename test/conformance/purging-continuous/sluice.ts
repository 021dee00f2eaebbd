import { ContinuousEventTimeTrigger, PurgingTrigger, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** Tumbling 100 ms windows firing every 40 ms and emptied at each firing: sum/count of each slice. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .trigger(PurgingTrigger.of(ContinuousEventTimeTrigger.of(40)))
    .aggregate(sumCount);
