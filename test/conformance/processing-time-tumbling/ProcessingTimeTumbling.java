package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** 100 ms processing-time windows: each window's key, bounds, sum and count. */
public class ProcessingTimeTumbling implements OperatorScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
        .process(new Summary());
  }

  static final class Summary extends ProcessWindowFunction<Event, String, String, TimeWindow> {
    @Override
    public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
      long sum = 0;
      int count = 0;
      for (Event event : elements) {
        sum += event.value;
        count++;
      }
      out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") sum " + sum + " count " + count);
    }
  }
}
