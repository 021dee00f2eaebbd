import { EventTimeSessionWindows, OutputTag, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

/** The late side output of session-late-merge's sessions: only records that join no open session. */
export default (events: DataStream<Event>) => {
  const late = new OutputTag<Event>('late');
  const sessions = events
    .keyBy((event) => event.key)
    .window(EventTimeSessionWindows.withGap(30))
    .sideOutputLateData(late)
    .sum('value');
  return sessions.getSideOutput(late).map((event) => `${event.key} ${event.value} @${event.timestamp}`);
};
