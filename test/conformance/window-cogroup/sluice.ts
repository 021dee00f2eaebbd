import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sharedKey, sides } from '../functions.js';

/** A window coGroup: per key and 100 ms window, both inputs' values, either side possibly empty. */
export default (events: DataStream<Event>) => {
  const [first, second] = sides(events);
  const list = (values: readonly Event[]) => `[${values.map((event) => event.value).join(', ')}]`;
  return first
    .coGroup(second)
    .where(sharedKey)
    .equalTo(sharedKey)
    .window(TumblingEventTimeWindows.of(100))
    .apply<string>((one, two, out) => out.collect(`${list(one)} / ${list(two)}`));
};
