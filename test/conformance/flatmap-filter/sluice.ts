import type { DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** Stateless: filter values above 1, flatMap each into as many copies as its value modulo 3, map to text. */
export default (events: DataStream<Event>) =>
  events
    .filter((event) => event.value > 1)
    .flatMap((event) => Array.from({ length: event.value % 3 }, (_, copy) => ({ ...event, copy })))
    .map((event, { timestamp }) => `${event.key} ${event.value} copy ${event.copy} at ${timestamp ?? 'none'}`);
