package dev.sluice.conformance;

import org.apache.flink.api.common.functions.AggregateFunction;

/** "sum/count" of the values, with accumulators that merge (for session windows); functions.ts has Sluice's. */
public final class SumCount implements AggregateFunction<Event, long[], String> {
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
