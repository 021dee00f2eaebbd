import { ValueStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Counts records per key in keyed state; each asks for an event-time timer 50 ms later, which reports the count. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .withState((state) => ({ count: state.getState(new ValueStateDescriptor<number>('count', 0)) }))
    .process<string>({
      processElement(_event, context) {
        context.state.count.update((context.state.count.value() ?? 0) + 1);
        context.timerService().registerEventTimeTimer((context.timestamp ?? 0) + 50);
      },
      onTimer(timestamp, context, out) {
        out.collect(`${context.getCurrentKey()} timer ${timestamp} count ${context.state.count.value() ?? 0}`);
      },
    });
