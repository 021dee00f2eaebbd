import { ContinuousProcessingTimeTrigger, TumblingProcessingTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { values } from '../functions.js';

/** 100 ms processing-time windows that fire every 30 ms of the clock while open, and at their end. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingProcessingTimeWindows.of(100))
    .trigger(ContinuousProcessingTimeTrigger.of(30))
    .process(values);
