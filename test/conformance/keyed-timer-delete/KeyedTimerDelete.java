package dev.sluice.conformance;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** A debounce: each record replaces its key's pending event-time timer (deleted, then set 30 ms later); a timer reports the last value. */
public class KeyedTimerDelete implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new Debounce());
  }

  static final class Debounce extends KeyedProcessFunction<String, Event, String> {
    private transient ValueState<Long> pending;
    private transient ValueState<Long> last;

    @Override
    public void open(OpenContext context) {
      pending = getRuntimeContext().getState(new ValueStateDescriptor<>("pending", Long.class));
      last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Long.class));
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      Long previous = pending.value();
      if (previous != null) context.timerService().deleteEventTimeTimer(previous);
      long at = context.timestamp() + 30;
      context.timerService().registerEventTimeTimer(at);
      pending.update(at);
      last.update(event.value);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      out.collect(context.getCurrentKey() + " quiet at " + timestamp + ": last " + last.value());
      pending.clear();
    }
  }
}
