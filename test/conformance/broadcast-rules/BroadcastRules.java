package dev.sluice.conformance;

import java.util.Map;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Rules broadcast to a non-keyed stream: each rule sets a key's limit, or with a negative limit
 * removes it; each event is checked against its key's limit and told how many rules are known.
 */
public class BroadcastRules implements NonKeyedBroadcastScenario {
  static final MapStateDescriptor<String, Long> LIMITS = new MapStateDescriptor<>("limits", Types.STRING, Types.LONG);

  @Override
  public BroadcastProcessFunction<Event, Event, String> function() {
    return new Rules();
  }

  @Override
  public MapStateDescriptor<?, ?>[] broadcastStates() {
    return new MapStateDescriptor<?, ?>[] {LIMITS};
  }

  static final class Rules extends BroadcastProcessFunction<Event, Event, String> {
    @Override
    public void processElement(Event event, ReadOnlyContext context, Collector<String> out) throws Exception {
      Long limit = context.getBroadcastState(LIMITS).get(Event.sharedKey(event));
      int known = 0;
      for (Map.Entry<String, Long> ignored : context.getBroadcastState(LIMITS).immutableEntries()) known++;
      out.collect(Event.sharedKey(event) + " " + event.value + (limit == null ? " no limit" : event.value > limit ? " over " + limit : " within " + limit) + " of " + known + " rules");
    }

    @Override
    public void processBroadcastElement(Event rule, Context context, Collector<String> out) throws Exception {
      if (rule.value < 0) context.getBroadcastState(LIMITS).remove(Event.sharedKey(rule));
      else context.getBroadcastState(LIMITS).put(Event.sharedKey(rule), rule.value);
      out.collect("rule " + Event.sharedKey(rule) + " = " + rule.value);
    }
  }
}
