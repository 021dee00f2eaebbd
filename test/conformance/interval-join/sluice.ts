import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

/** Each first-input event joined with the second-input events of its key from 10 ms before to 20 ms after it (exclusive). */
export default (events: DataStream<Event>) => {
  const [first, second] = sides(events);
  return first
    .keyBy(sharedKey)
    .intervalJoin(second.keyBy(sharedKey))
    .between(-10, 20)
    .upperBoundExclusive()
    .process<string>((left, right, { leftTimestamp, rightTimestamp }, out) => {
      out.collect(`${sharedKey(left)} ${left.value}@${leftTimestamp} with ${right.value}@${rightTimestamp}`);
    });
};
