import { MapStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

const LIMITS = new MapStateDescriptor<string, number>('limits');

/**
 * Rules broadcast to a non-keyed stream: each rule sets a key's limit, or with a negative limit
 * removes it; each event is checked against its key's limit and told how many rules are known.
 */
export default (events: DataStream<Event>) => {
  // One shard, as Flink's harness runs one instance: every instance (every shard here) emits what
  // processBroadcastElement emits.
  events.getExecutionEnvironment().setParallelism(1);
  const [checked, rules] = sides(events);
  return checked.connect(rules.broadcast(LIMITS)).process<string>({
    processElement(event, { getBroadcastState }, out) {
      const limits = getBroadcastState(LIMITS);
      const limit = limits.get(sharedKey(event));
      const verdict = limit === undefined ? 'no limit' : event.value > limit ? `over ${limit}` : `within ${limit}`;
      out.collect(`${sharedKey(event)} ${event.value} ${verdict} of ${limits.entries().length} rules`);
    },
    processBroadcastElement(rule, { getBroadcastState }, out) {
      if (rule.value < 0) getBroadcastState(LIMITS).remove(sharedKey(rule));
      else getBroadcastState(LIMITS).put(sharedKey(rule), rule.value);
      out.collect(`rule ${sharedKey(rule)} = ${rule.value}`);
    },
  });
};
