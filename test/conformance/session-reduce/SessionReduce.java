package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;

/** Sessions with a 30 ms gap reduced to their sum; a record out of order bridges two sessions into one. */
public class SessionReduce implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(30)))
        .reduce(Event::sumWithLatest)
        .map(event -> event.key + " " + event.value);
  }
}
