import { OutputTag, TumblingEventTimeWindows, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

const late = new OutputTag<Event>('late');

/** Tumbling 100 ms sums without allowed lateness: records for a window the watermark passed, even one never opened, go to the late side output. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .window(TumblingEventTimeWindows.of(100))
    .sideOutputLateData(late)
    .sum('value')
    .getSideOutput(late)
    .map((event, { timestamp }) => `late ${event.key} ${event.value} at ${timestamp}`);
