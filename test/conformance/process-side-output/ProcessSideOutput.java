package dev.sluice.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * A ProcessFunction sends odd values on and even ones to a side output; both are labelled, unioned,
 * and gathered per 100 ms window in sorted order (a union's inputs interleave in no fixed order).
 */
public class ProcessSideOutput implements Scenario {
  private static final OutputTag<Event> EVENS = new OutputTag<Event>("evens") {};

  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    SingleOutputStreamOperator<Event> odd = events.process(new ProcessFunction<Event, Event>() {
      @Override
      public void processElement(Event event, Context context, Collector<Event> out) {
        if (event.value % 2 == 0) context.output(EVENS, event);
        else out.collect(event);
      }
    });
    return odd.process(new Label("odd"))
        .union(odd.getSideOutput(EVENS).process(new Label("even")))
        .keyBy(label -> "all")
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .process(new Sorted());
  }

  static final class Label extends ProcessFunction<Event, String> {
    private final String label;

    Label(String label) {
      this.label = label;
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) {
      out.collect(label + " " + event.key + " " + event.value + " at " + context.timestamp());
    }
  }

  static final class Sorted extends ProcessWindowFunction<String, String, String, TimeWindow> {
    @Override
    public void process(String key, Context context, Iterable<String> labels, Collector<String> out) {
      List<String> sorted = new ArrayList<>();
      labels.forEach(sorted::add);
      Collections.sort(sorted);
      out.collect("[" + context.window().getStart() + "," + context.window().getEnd() + ") " + String.join("; ", sorted));
    }
  }
}
