package dev.sluice.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessAllWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Tumbling 100 ms windows over the whole stream, 50 ms late: every element of every key, in order. */
public class TumblingWindowAll implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .windowAll(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .allowedLateness(Duration.ofMillis(50))
        .process(new AllElements());
  }

  static final class AllElements extends ProcessAllWindowFunction<Event, String, TimeWindow> {
    @Override
    public void process(Context context, Iterable<Event> elements, Collector<String> out) {
      List<String> seen = new ArrayList<>();
      for (Event event : elements) seen.add(event.key + event.value);
      out.collect("[" + context.window().getStart() + "," + context.window().getEnd() + ") " + seen);
    }
  }
}
