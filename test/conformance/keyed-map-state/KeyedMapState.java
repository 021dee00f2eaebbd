package dev.sluice.conformance;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** MapState per key: a count per value parity, reported with every record in a fixed order. */
public class KeyedMapState implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new Parity());
  }

  static final class Parity extends KeyedProcessFunction<String, Event, String> {
    private transient MapState<String, Long> counts;

    @Override
    public void open(OpenContext context) {
      counts = getRuntimeContext().getMapState(new MapStateDescriptor<>("counts", String.class, Long.class));
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      String parity = event.value % 2 == 0 ? "even" : "odd";
      Long seen = counts.get(parity);
      counts.put(parity, (seen == null ? 0 : seen) + 1);
      long keys = 0;
      for (String key : counts.keys()) keys++;
      Long even = counts.get("even");
      Long odd = counts.get("odd");
      out.collect(context.getCurrentKey() + " even " + (even == null ? 0 : even) + " odd " + (odd == null ? 0 : odd) + " keys " + keys);
    }
  }
}
