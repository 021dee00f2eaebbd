import { ValueStateDescriptor, type DataStream, type ValueState } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Counts records per key in keyed state; each asks for an event-time timer 50 ms later, which reports the count. */
export default (events: DataStream<Event>) => {
  let count!: ValueState<number>;
  return events.keyBy((event) => event.key).process<string>({
    open(state) {
      count = state.getState(new ValueStateDescriptor<number>('count', 0));
    },
    processElement(_event, context) {
      count.update((count.value() ?? 0) + 1);
      context.timerService().registerEventTimeTimer((context.timestamp ?? 0) + 50);
    },
    onTimer(timestamp, context, out) {
      out.collect(`${context.getCurrentKey()} timer ${timestamp} count ${count.value() ?? 0}`);
    },
  });
};
