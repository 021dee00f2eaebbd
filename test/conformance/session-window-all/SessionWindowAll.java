package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;

/** Event-time sessions (gap 30 ms) over the whole stream: sum/count of each. */
public class SessionWindowAll implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.windowAll(EventTimeSessionWindows.withGap(Duration.ofMillis(30))).aggregate(new SumCount());
  }
}
