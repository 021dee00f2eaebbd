package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.util.Collector;

/** Sliding windows of 100 ms every 40 ms, averaged by an AggregateFunction ("sum/count"). */
public class SlidingAggregate implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(100), Duration.ofMillis(40)))
        .aggregate(new SumCount())
        .process(new ProcessFunction<String, String>() {
          @Override
          public void processElement(String result, Context context, Collector<String> out) {
            out.collect(result + " ending " + (context.timestamp() + 1));
          }
        });
  }
}
