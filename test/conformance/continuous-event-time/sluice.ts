import { ContinuousEventTimeTrigger, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumAtWatermark } from '../functions.js';

/** Tumbling 100 ms windows that fire every 30 ms of event time while open, and at their end. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .trigger(ContinuousEventTimeTrigger.of(30))
    .process(sumAtWatermark);
