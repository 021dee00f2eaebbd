package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/** Tumbling 100 ms windows reduced to the sum of the values and the latest event time. */
public class TumblingReduce implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .reduce(Event::sumWithLatest)
        .map(event -> event.key + " " + event.value + " latest " + event.timestamp);
  }
}
