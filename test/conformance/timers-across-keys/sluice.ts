import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Event-time timers of several keys that one watermark makes due fire in timestamp order, each at its own time. */
export default (events: DataStream<Event>) =>
  events.keyBy((event) => event.key).process<string>({
    processElement(event, context) {
      context.timerService().registerEventTimeTimer(event.timestamp + event.value * 100);
    },
    onTimer(timestamp, context, out) {
      out.collect(`${context.getCurrentKey()} timer ${timestamp} watermark ${context.timerService().currentWatermark()}`);
    },
  });
