package dev.sluice.conformance;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Enrichment: the second input sets a key's factor, the first input's values are multiplied by
 * it, and an event-time timer 100 ms after each first-input event reports the factor then.
 */
public class KeyedCoProcess implements TwoInputScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> first, DataStream<Event> second) {
    return first.keyBy(Event::sharedKey).connect(second.keyBy(Event::sharedKey)).process(new Enrich());
  }

  static final class Enrich extends KeyedCoProcessFunction<String, Event, Event, String> {
    private transient ValueState<Long> factor;

    @Override
    public void open(OpenContext context) {
      factor = getRuntimeContext().getState(new ValueStateDescriptor<>("factor", Long.class));
    }

    @Override
    public void processElement1(Event event, Context context, Collector<String> out) throws Exception {
      Long current = factor.value();
      out.collect(context.getCurrentKey() + " " + event.value + (current == null ? " unenriched" : " x " + current + " = " + event.value * current));
      context.timerService().registerEventTimeTimer(event.timestamp + 100);
    }

    @Override
    public void processElement2(Event event, Context context, Collector<String> out) throws Exception {
      factor.update(event.value);
      out.collect(context.getCurrentKey() + " factor " + event.value);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      out.collect(context.getCurrentKey() + " timer at " + timestamp + ", factor " + factor.value());
    }
  }
}
