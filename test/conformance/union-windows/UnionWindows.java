package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;

/** Two branches of one stream, small and large values relabelled, unioned and summed per label in 100 ms windows. */
public class UnionWindows implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    DataStream<Event> small = events.filter(event -> event.value < 10).map(event -> relabel(event, "small"));
    DataStream<Event> large = events.filter(event -> event.value >= 10).map(event -> relabel(event, "large"));
    return small
        .union(large)
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .sum("value")
        .process(new ProcessFunction<Event, String>() {
          @Override
          public void processElement(Event event, Context context, Collector<String> out) {
            out.collect(event.key + " " + event.value + " ending " + (context.timestamp() + 1));
          }
        });
  }

  private static Event relabel(Event event, String key) {
    Event relabelled = new Event();
    relabelled.key = key;
    relabelled.value = event.value;
    relabelled.timestamp = event.timestamp;
    return relabelled;
  }
}
