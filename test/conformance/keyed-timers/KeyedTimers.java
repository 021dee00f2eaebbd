package dev.sluice.conformance;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Counts records per key in keyed state; each asks for an event-time timer 50 ms later, which reports the count. */
public class KeyedTimers implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new CountWithTimers());
  }

  static final class CountWithTimers extends KeyedProcessFunction<String, Event, String> {
    private transient ValueState<Long> count;

    @Override
    public void open(OpenContext context) {
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      count.update((count.value() == null ? 0 : count.value()) + 1);
      context.timerService().registerEventTimeTimer(context.timestamp() + 50);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      out.collect(context.getCurrentKey() + " timer " + timestamp + " count " + count.value());
    }
  }
}
