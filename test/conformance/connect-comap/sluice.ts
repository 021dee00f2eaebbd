import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sides } from '../functions.js';

/** Two streams connected, each mapped by its own function. */
export default (events: DataStream<Event>) => {
  const [first, second] = sides(events);
  return first.connect(second).map({
    map1: (event) => `first ${event.key} ${event.value}`,
    map2: (event) => `second ${event.key} ${event.value * 10}`,
  });
};
