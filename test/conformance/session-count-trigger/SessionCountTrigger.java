package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;

/** Event-time sessions (gap 30 ms) that fire at every third element, counts merged with the sessions. */
public class SessionCountTrigger implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(30)))
        .trigger(CountTrigger.of(3))
        .process(new SessionLateMerge.Summary());
  }
}
