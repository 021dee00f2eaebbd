import { EventTimeSessionWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';
import { sumCount } from '../functions.js';

/** Event-time sessions (gap 30 ms) over the whole stream: sum/count of each. */
export default (events: DataStream<Event>) => events.windowAll(EventTimeSessionWindows.withGap(30)).aggregate(sumCount);
