import { TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Windowed field aggregations: min keeps the first record's other fields, maxBy the whole extreme record (the first of a tie). */
export default (events: DataStream<Event>) => {
  const keyed = events.keyBy((event) => event.key);
  const min = keyed.window(TumblingEventTimeWindows.of(100)).min('value').map((event) => `min ${event.key} ${event.value} from ${event.timestamp}`);
  const maxBy = keyed.window(TumblingEventTimeWindows.of(100)).maxBy('value').map((event) => `maxBy ${event.key} ${event.value} from ${event.timestamp}`);
  return min.union(maxBy).keyBy(() => 'all').window(TumblingEventTimeWindows.of(100)).process<string>((_key, _context, lines, out) => {
    for (const line of [...lines].sort()) out.collect(line);
  });
};
