package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** A ProcessWindowFunction on sliding windows of 60 ms every 20 ms: each window's count and sum. */
public class SlidingProcessWindow implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(60), Duration.ofMillis(20)))
        .process(new ProcessWindowFunction<Event, String, String, TimeWindow>() {
          @Override
          public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
            long count = 0;
            long sum = 0;
            for (Event event : elements) {
              count++;
              sum += event.value;
            }
            out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") count " + count + " sum " + sum);
          }
        });
  }
}
