package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/** A window join: every pair of first- and second-input events of a key in a 100 ms window. */
public class WindowJoin implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.filter(Event::first)
        .join(events.filter(event -> !Event.first(event)))
        .where(Event::sharedKey)
        .equalTo(Event::sharedKey)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .apply((left, right) -> Event.sharedKey(left) + " " + left.value + "+" + right.value);
  }
}
