package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** A ProcessWindowFunction over every element of 100 ms windows: count, sum and the latest event time. */
public class TumblingProcessWindow implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .process(new Summary());
  }

  static final class Summary extends ProcessWindowFunction<Event, String, String, TimeWindow> {
    @Override
    public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
      long count = 0;
      long sum = 0;
      long latest = Long.MIN_VALUE;
      for (Event event : elements) {
        count++;
        sum += event.value;
        latest = Math.max(latest, event.timestamp);
      }
      out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") count " + count + " sum " + sum + " latest " + latest);
    }
  }
}
