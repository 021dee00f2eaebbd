package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** aggregate(AggregateFunction, ProcessWindowFunction): the window function sees the one pre-aggregated result. */
public class TumblingAggregateProcess implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(50)))
        .aggregate(new SumCount(), new Label());
  }

  static final class Label extends ProcessWindowFunction<String, String, String, TimeWindow> {
    @Override
    public void process(String key, Context context, Iterable<String> results, Collector<String> out) {
      for (String result : results) {
        out.collect(key + " " + context.window().getStart() + "-" + context.window().getEnd() + " " + result + " watermark " + context.currentWatermark());
      }
    }
  }
}
