package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/** Tumbling 100 ms windows, maxBy("value", false): the whole winning element, the last of a tie. */
public class MaxbyTies implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .maxBy("value", false)
        .map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
