package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;

/** Sessions with a 20 ms gap, aggregated to "sum/count" by an AggregateFunction whose accumulators merge. */
public class SessionAggregate implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(20)))
        .aggregate(new SumCount());
  }
}
