import { ValueStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Sums per key; the first record after a report asks for a processing-time timer 30 ms later, which reports the sum. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .withState((state) => ({ sum: state.getState(new ValueStateDescriptor<number>('sum')) }))
    .process<string>({
      processElement(event, { state, timerService, getCurrentKey }, out) {
        const now = timerService().currentProcessingTime();
        if (state.sum.value() === undefined) timerService().registerProcessingTimeTimer(now + 30);
        state.sum.update((state.sum.value() ?? 0) + event.value);
        out.collect(`${getCurrentKey()} got ${event.value} at ${now}`);
      },
      onTimer(timestamp, { state, getCurrentKey }, out) {
        out.collect(`${getCurrentKey()} timer ${timestamp} sum ${state.sum.value()}`);
        state.sum.clear();
      },
    });
