package dev.sluice.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Windowed field aggregations: min keeps the first record's other fields, maxBy the whole extreme record (the first of a tie). */
public class WindowedMinMax implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    KeyedStream<Event, String> keyed = events.keyBy(event -> event.key);
    DataStream<String> min =
        keyed.window(TumblingEventTimeWindows.of(Duration.ofMillis(100))).min("value").map(event -> "min " + event.key + " " + event.value + " from " + event.timestamp);
    DataStream<String> maxBy =
        keyed.window(TumblingEventTimeWindows.of(Duration.ofMillis(100))).maxBy("value").map(event -> "maxBy " + event.key + " " + event.value + " from " + event.timestamp);
    return min.union(maxBy)
        .keyBy(line -> "all")
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .process(new ProcessWindowFunction<String, String, String, TimeWindow>() {
          @Override
          public void process(String key, Context context, Iterable<String> lines, Collector<String> out) {
            List<String> sorted = new ArrayList<>();
            lines.forEach(sorted::add);
            Collections.sort(sorted);
            for (String line : sorted) out.collect(line);
          }
        });
  }
}
