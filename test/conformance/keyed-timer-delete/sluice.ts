import { ValueStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** A debounce: each record replaces its key's pending event-time timer (deleted, then set 30 ms later); a timer reports the last value. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .withState((state) => ({
      pending: state.getState(new ValueStateDescriptor<number>('pending')),
      last: state.getState(new ValueStateDescriptor<number>('last')),
    }))
    .process<string>({
      processElement(event, { state, timestamp, timerService }) {
        const previous = state.pending.value();
        if (previous !== undefined) timerService().deleteEventTimeTimer(previous);
        const at = (timestamp ?? 0) + 30;
        timerService().registerEventTimeTimer(at);
        state.pending.update(at);
        state.last.update(event.value);
      },
      onTimer(timestamp, { state, getCurrentKey }, out) {
        out.collect(`${getCurrentKey()} quiet at ${timestamp}: last ${state.last.value() ?? 'none'}`);
        state.pending.clear();
      },
    });
