import { ValueStateDescriptor, type DataStream, type ValueState } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** A debounce: each record replaces its key's pending event-time timer (deleted, then set 30 ms later); a timer reports the last value. */
export default (events: DataStream<Event>) => {
  let pending!: ValueState<number>;
  let last!: ValueState<number>;
  return events.keyBy((event) => event.key).process<string>({
    open(state) {
      pending = state.getState(new ValueStateDescriptor<number>('pending'));
      last = state.getState(new ValueStateDescriptor<number>('last'));
    },
    processElement(event, context) {
      const previous = pending.value();
      if (previous !== undefined) context.timerService().deleteEventTimeTimer(previous);
      const at = (context.timestamp ?? 0) + 30;
      context.timerService().registerEventTimeTimer(at);
      pending.update(at);
      last.update(event.value);
    },
    onTimer(timestamp, context, out) {
      out.collect(`${context.getCurrentKey()} quiet at ${timestamp}: last ${last.value() ?? 'none'}`);
      pending.clear();
    },
  });
};
