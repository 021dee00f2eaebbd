import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

/** A window join: every pair of first- and second-input events of a key in a 100 ms window. */
export default (events: DataStream<Event>) => {
  const [first, second] = sides(events);
  return first
    .join(second)
    .where(sharedKey)
    .equalTo(sharedKey)
    .window(TumblingEventTimeWindows.of(100))
    .apply((left, right) => `${sharedKey(left)} ${left.value}+${right.value}`);
};
