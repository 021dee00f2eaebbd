import { DeltaEvictor, DeltaTrigger, GlobalWindows, type DataStream, type DeltaFunction } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { values } from '../functions.js';

const rise: DeltaFunction<Event> = (older, newer) => newer.value - older.value;

/**
 * A global window per key that fires when a value rises more than 10 above the one of the last
 * firing, over the values less than 15 below the newest.
 */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(GlobalWindows.create())
    .trigger(DeltaTrigger.of(10, rise))
    .evictor(DeltaEvictor.of(15, rise))
    .process(values);
