import { ValueStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

/**
 * Enrichment: the second input sets a key's factor, the first input's values are multiplied by
 * it, and an event-time timer 100 ms after each first-input event reports the factor then.
 */
export default (events: DataStream<Event>) => {
  const [first, second] = sides(events);
  return first
    .keyBy(sharedKey)
    .connect(second.keyBy(sharedKey))
    .process<string, { factor: ReturnType<typeof factorOf> }>({
      open: (state) => ({ factor: factorOf(state) }),
      processElement1(event, { getCurrentKey, state, timerService }, out) {
        const current = state.factor.value();
        out.collect(`${getCurrentKey()} ${event.value}${current === undefined ? ' unenriched' : ` x ${current} = ${event.value * current}`}`);
        timerService().registerEventTimeTimer(event.timestamp + 100);
      },
      processElement2(event, { getCurrentKey, state }, out) {
        state.factor.update(event.value);
        out.collect(`${getCurrentKey()} factor ${event.value}`);
      },
      onTimer(timestamp, { getCurrentKey, state }, out) {
        out.collect(`${getCurrentKey()} timer at ${timestamp}, factor ${state.factor.value() ?? 'null'}`);
      },
    });
};

const factorOf = (state: import('../../../lib/api/index.js').RuntimeContext) => state.getState(new ValueStateDescriptor<number>('factor'));
