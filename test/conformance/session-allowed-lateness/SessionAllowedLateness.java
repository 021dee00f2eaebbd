package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Sessions with a 20 ms gap and 50 ms of allowed lateness: a late record within it merges and fires the session again. */
public class SessionAllowedLateness implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(20)))
        .allowedLateness(Duration.ofMillis(50))
        .process(new ProcessWindowFunction<Event, String, String, TimeWindow>() {
          @Override
          public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
            long sum = 0;
            for (Event event : elements) sum += event.value;
            out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") sum " + sum);
          }
        });
  }
}
