package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/** Tumbling 100 ms sums without allowed lateness: records for a window the watermark passed, even one never opened, go to the late side output. */
public class TumblingLateSideOutput implements Scenario {
  private static final OutputTag<Event> LATE = new OutputTag<Event>("late") {};

  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .sideOutputLateData(LATE)
        .sum("value")
        .getSideOutput(LATE)
        .process(new ProcessFunction<Event, String>() {
          @Override
          public void processElement(Event event, Context context, Collector<String> out) {
            out.collect("late " + event.key + " " + event.value + " at " + context.timestamp());
          }
        });
  }
}
