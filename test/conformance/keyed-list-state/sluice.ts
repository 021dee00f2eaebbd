import { ListStateDescriptor, type DataStream, type ListState } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Event-time sorting: a KeyedProcessFunction buffers records in ListState and, at a timer on each record's time, emits those at or before it in time order. */
export default (events: DataStream<Event>) => {
  let buffer!: ListState<Event>;
  return events.keyBy((event) => event.key).process<string>({
    open(state) {
      buffer = state.getListState(new ListStateDescriptor<Event>('buffer'));
    },
    processElement(event, context) {
      buffer.add(event);
      context.timerService().registerEventTimeTimer(event.timestamp);
    },
    onTimer(timestamp, context, out) {
      const all = buffer.get();
      const due = all.filter((event) => event.timestamp <= timestamp).sort((a, b) => a.timestamp - b.timestamp);
      for (const event of due) out.collect(`${context.getCurrentKey()} ${event.value} at ${event.timestamp} (timer ${timestamp})`);
      buffer.update(all.filter((event) => event.timestamp > timestamp));
    },
  });
};
