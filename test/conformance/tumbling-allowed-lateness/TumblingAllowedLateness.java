package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/** Tumbling 100 ms windows with 50 ms of allowed lateness, sum of the value per key. */
public class TumblingAllowedLateness implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .allowedLateness(Duration.ofMillis(50))
        .sum("value")
        .map(event -> event.key + " " + event.value);
  }
}
