package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.api.common.functions.AggregateFunction;
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

  static final class SumCount implements AggregateFunction<Event, long[], String> {
    @Override
    public long[] createAccumulator() {
      return new long[] {0, 0};
    }

    @Override
    public long[] add(Event event, long[] accumulator) {
      return new long[] {accumulator[0] + event.value, accumulator[1] + 1};
    }

    @Override
    public String getResult(long[] accumulator) {
      return accumulator[0] + "/" + accumulator[1];
    }

    @Override
    public long[] merge(long[] a, long[] b) {
      return new long[] {a[0] + b[0], a[1] + b[1]};
    }
  }
}
