package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.util.OutputTag;

/** The late side output of sliding windows of 100 ms every 50 ms. */
public class SlidingLateSideOutput implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    OutputTag<Event> late = new OutputTag<>("late") {};
    SingleOutputStreamOperator<Event> sums = events
        .keyBy(event -> event.key)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(100), Duration.ofMillis(50)))
        .sideOutputLateData(late)
        .sum("value");
    return sums.getSideOutput(late).map(event -> event.key + " " + event.value + " @" + event.timestamp);
  }
}
