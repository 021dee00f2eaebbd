import { EventTimeSessionWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** Sessions with a 20 ms gap, aggregated to "sum/count" by an AggregateFunction whose accumulators merge. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(20))
    .aggregate(sumCount);
