package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.util.OutputTag;

/** The late side output of session-late-merge's sessions: only records that join no open session. */
public class SessionLateSideOutput implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    OutputTag<Event> late = new OutputTag<>("late") {};
    SingleOutputStreamOperator<Event> sessions = events
        .keyBy(event -> event.key)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(30)))
        .sideOutputLateData(late)
        .sum("value");
    return sessions.getSideOutput(late).map(event -> event.key + " " + event.value + " @" + event.timestamp);
  }
}
