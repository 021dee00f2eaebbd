package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Event-time sessions (gap 30 ms): each session's key, bounds, sum and count. */
public class SessionLateMerge implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(30)))
        .process(new Summary());
  }

  static final class Summary extends ProcessWindowFunction<Event, String, String, TimeWindow> {
    @Override
    public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
      long sum = 0;
      int count = 0;
      for (Event event : elements) {
        sum += event.value;
        count++;
      }
      out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") sum " + sum + " count " + count);
    }
  }
}
