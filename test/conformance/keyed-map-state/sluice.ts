import { MapStateDescriptor, type DataStream, type MapState } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** MapState per key: a count per value parity, reported with every record in a fixed order. */
export default (events: DataStream<Event>) => {
  let counts!: MapState<string, number>;
  return events.keyBy((event) => event.key).process<string>({
    open(state) {
      counts = state.getMapState(new MapStateDescriptor<string, number>('counts'));
    },
    processElement(event, context, out) {
      const parity = event.value % 2 === 0 ? 'even' : 'odd';
      counts.put(parity, (counts.get(parity) ?? 0) + 1);
      out.collect(`${context.getCurrentKey()} even ${counts.get('even') ?? 0} odd ${counts.get('odd') ?? 0} keys ${counts.keys().length}`);
    },
  });
};
