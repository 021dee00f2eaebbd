package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;

/** Sliding windows of 100 ms every 50 ms, sum of the value per key. */
public class SlidingSum implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(100), Duration.ofMillis(50)))
        .sum("value")
        .map(event -> event.key + " " + event.value);
  }
}
