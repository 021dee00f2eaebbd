import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumAtWatermark } from '../functions.js';

/** 100 ms event-time windows over two partitions, one of which goes idle and comes back: each window's key, bounds, sum and the watermark it fired at. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .process<string>(sumAtWatermark);
