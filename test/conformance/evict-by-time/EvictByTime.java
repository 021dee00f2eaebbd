package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.evictors.TimeEvictor;

/** Tumbling 100 ms windows open 50 ms late, reduced over the elements within 30 ms of the newest. */
public class EvictByTime implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .allowedLateness(Duration.ofMillis(50))
        .evictor(TimeEvictor.of(Duration.ofMillis(30)))
        .reduce(Event::sumWithLatest)
        .map(event -> event.key + " " + event.value + " latest " + event.timestamp);
  }
}
