import { StateTtlConfig, StateVisibility, UpdateType, ValueStateDescriptor, type DataStream } from '../../../lib/api/index.js';
import type { Event } from '../event.js';

const ttl = StateTtlConfig.newBuilder(50).setUpdateType(UpdateType.OnCreateAndWrite).setStateVisibility(StateVisibility.NeverReturnExpired).build();

/** A running sum per key kept with a 50 ms time-to-live from each write: what each record finds, and the new sum. */
export default (events: DataStream<Event>) =>
  events
    .keyBy((event) => event.key)
    .withState((state) => ({ sum: state.getState(new ValueStateDescriptor<number>('sum').enableTimeToLive(ttl)) }))
    .process<string>({
      processElement(event, { state, getCurrentKey }, out) {
        const found = state.sum.value();
        const next = (found ?? 0) + event.value;
        state.sum.update(next);
        out.collect(`${getCurrentKey()} found ${found ?? 'nothing'} now ${next}`);
      },
    });
