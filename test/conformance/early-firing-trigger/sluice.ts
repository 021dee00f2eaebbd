import { TriggerResult, TumblingEventTimeWindows, type DataStream, type Trigger } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** A trigger of the user's own: fires early at a value of 10 or more, fires and purges at the window's end. */
const earlyOnLargeValues: Trigger<Event> = {
  onElement(event, _timestamp, window, context) {
    context.registerEventTimeTimer(window.end - 1);
    return event.value >= 10 ? TriggerResult.FIRE : TriggerResult.CONTINUE;
  },
  onEventTime: (time, window) => (time === window.end - 1 ? TriggerResult.FIRE_AND_PURGE : TriggerResult.CONTINUE),
  onProcessingTime: () => TriggerResult.CONTINUE,
  clear: (window, context) => context.deleteEventTimeTimer(window.end - 1),
};

export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .trigger(earlyOnLargeValues)
    .aggregate(sumCount);
