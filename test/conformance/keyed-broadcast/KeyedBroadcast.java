package dev.sluice.conformance;

import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Limits per key broadcast to the keyed side: each keyed event is checked against its key's
 * limit, its running sum kept in keyed state, and an event-time timer 50 ms later reports the
 * sum and the limits known then.
 */
public class KeyedBroadcast implements BroadcastScenario {
  static final MapStateDescriptor<String, Long> LIMITS = new MapStateDescriptor<>("limits", Types.STRING, Types.LONG);

  @Override
  public KeyedBroadcastProcessFunction<String, Event, Event, String> function() {
    return new Limits();
  }

  @Override
  public KeySelector<Event, String> key() {
    return Event::sharedKey;
  }

  @Override
  public MapStateDescriptor<?, ?>[] broadcastStates() {
    return new MapStateDescriptor<?, ?>[] {LIMITS};
  }

  static final class Limits extends KeyedBroadcastProcessFunction<String, Event, Event, String> {
    private final ValueStateDescriptor<Long> sumDescriptor = new ValueStateDescriptor<>("sum", Types.LONG);

    @Override
    public void processElement(Event event, ReadOnlyContext context, Collector<String> out) throws Exception {
      ValueState<Long> sum = getRuntimeContext().getState(sumDescriptor);
      long total = (sum.value() == null ? 0 : sum.value()) + event.value;
      sum.update(total);
      Long limit = context.getBroadcastState(LIMITS).get(context.getCurrentKey());
      out.collect(context.getCurrentKey() + " " + event.value + " sum " + total + (limit == null ? " no limit" : total > limit ? " over " + limit : " within " + limit));
      context.timerService().registerEventTimeTimer(event.timestamp + 50);
    }

    @Override
    public void processBroadcastElement(Event event, Context context, Collector<String> out) throws Exception {
      context.getBroadcastState(LIMITS).put(Event.sharedKey(event), event.value);
      out.collect("limit " + Event.sharedKey(event) + " = " + event.value);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      StringBuilder limits = new StringBuilder();
      for (Map.Entry<String, Long> entry : context.getBroadcastState(LIMITS).immutableEntries()) limits.append(' ').append(entry.getKey()).append('=').append(entry.getValue());
      out.collect(context.getCurrentKey() + " timer at " + timestamp + ", sum " + getRuntimeContext().getState(sumDescriptor).value() + ", limits" + limits);
    }
  }
}
