import { OutputTag, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

const evens = new OutputTag<Event>('evens');

/**
 * A ProcessFunction sends odd values on and even ones to a side output; both are labelled, unioned,
 * and gathered per 100 ms window in sorted order (a union's inputs interleave in no fixed order).
 */
export default (events: DataStream<Event>) => {
  const odd = events.process<Event>({
    processElement(event, context, out) {
      if (event.value % 2 === 0) context.output(evens, event);
      else out.collect(event);
    },
  });
  return odd
    .map((event, { timestamp }) => `odd ${event.key} ${event.value} at ${timestamp ?? 'none'}`)
    .union(odd.getSideOutput(evens).map((event, { timestamp }) => `even ${event.key} ${event.value} at ${timestamp ?? 'none'}`))
    .keyBy(() => 'all')
    .window(TumblingEventTimeWindows.of(100))
    .process<string>((_key, context, labels, out) => out.collect(`[${context.window.start},${context.window.end}) ${[...labels].sort().join('; ')}`));
};
