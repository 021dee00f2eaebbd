package dev.sluice.conformance;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Sums per key; the first record after a report asks for a processing-time timer 30 ms later, which reports the sum. */
public class ProcessingTimeTimers implements OperatorScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new SumOnTimer());
  }

  static final class SumOnTimer extends KeyedProcessFunction<String, Event, String> {
    private transient ValueState<Long> sum;

    @Override
    public void open(OpenContext context) {
      sum = getRuntimeContext().getState(new ValueStateDescriptor<>("sum", Long.class));
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      if (sum.value() == null) context.timerService().registerProcessingTimeTimer(context.timerService().currentProcessingTime() + 30);
      sum.update((sum.value() == null ? 0 : sum.value()) + event.value);
      out.collect(context.getCurrentKey() + " got " + event.value + " at " + context.timerService().currentProcessingTime());
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      out.collect(context.getCurrentKey() + " timer " + timestamp + " sum " + sum.value());
      sum.clear();
    }
  }
}
