import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** aggregate(AggregateFunction, ProcessWindowFunction): the window function sees the one pre-aggregated result. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(50))
    .aggregate<{ sum: number; count: number }, string, string>(sumCount, (key, context, [result], out) => {
      out.collect(`${key} ${context.window.start}-${context.window.end} ${result ?? ''} watermark ${context.currentWatermark()}`);
    });
