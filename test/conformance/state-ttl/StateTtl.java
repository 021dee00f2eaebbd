package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** A running sum per key kept with a 50 ms time-to-live from each write: what each record finds, and the new sum. */
public class StateTtl implements OperatorScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new ExpiringSum());
  }

  static final class ExpiringSum extends KeyedProcessFunction<String, Event, String> {
    private transient ValueState<Long> sum;

    @Override
    public void open(OpenContext context) {
      ValueStateDescriptor<Long> descriptor = new ValueStateDescriptor<>("sum", Long.class);
      descriptor.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(50))
          .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
          .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
          .build());
      sum = getRuntimeContext().getState(descriptor);
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      Long found = sum.value();
      long next = (found == null ? 0 : found) + event.value;
      sum.update(next);
      out.collect(context.getCurrentKey() + " found " + (found == null ? "nothing" : found) + " now " + next);
    }
  }
}
