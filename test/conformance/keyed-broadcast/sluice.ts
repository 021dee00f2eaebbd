import { MapStateDescriptor, ValueStateDescriptor, type DataStream, type ValueState } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

const LIMITS = new MapStateDescriptor<string, number>('limits');

/**
 * Limits per key broadcast to the keyed side: each keyed event is checked against its key's
 * limit, its running sum kept in keyed state, and an event-time timer 50 ms later reports the
 * sum and the limits known then.
 */
export default (events: DataStream<Event>) => {
  // One shard, as Flink's harness runs one instance: every instance (every shard here) emits what
  // processBroadcastElement emits.
  events.getExecutionEnvironment().setParallelism(1);
  const [keyed, limits] = sides(events);
  return keyed
    .keyBy(sharedKey)
    .connect(limits.broadcast(LIMITS))
    .process<string, { sum: ValueState<number> }>({
      open: (state) => ({ sum: state.getState(new ValueStateDescriptor<number>('sum')) }),
      processElement(event, { state, getBroadcastState, getCurrentKey, timerService }, out) {
        const total = (state.sum.value() ?? 0) + event.value;
        state.sum.update(total);
        const limit = getBroadcastState(LIMITS).get(getCurrentKey());
        out.collect(`${getCurrentKey()} ${event.value} sum ${total}${limit === undefined ? ' no limit' : total > limit ? ` over ${limit}` : ` within ${limit}`}`);
        timerService().registerEventTimeTimer(event.timestamp + 50);
      },
      processBroadcastElement(event, { getBroadcastState }, out) {
        getBroadcastState(LIMITS).put(sharedKey(event), event.value);
        out.collect(`limit ${sharedKey(event)} = ${event.value}`);
      },
      onTimer(timestamp, { state, getBroadcastState, getCurrentKey }, out) {
        const known = getBroadcastState(LIMITS)
          .entries()
          .map(([key, value]) => ` ${key}=${value}`)
          .join('');
        out.collect(`${getCurrentKey()} timer at ${timestamp}, sum ${state.sum.value() ?? 'null'}, limits${known}`);
      },
    });
};
