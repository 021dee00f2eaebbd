package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** 100 ms processing-time windows that fire every 30 ms of the clock while open, and at their end. */
public class ContinuousProcessingTime implements OperatorScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingProcessingTimeWindows.of(Duration.ofMillis(100)))
        .trigger(ContinuousProcessingTimeTrigger.of(Duration.ofMillis(30)))
        .process(new Values<TimeWindow>());
  }
}
