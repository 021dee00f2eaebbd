package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;

/** Tumbling 100 ms windows that fire every 30 ms of event time while open, and at their end. */
public class ContinuousEventTime implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .trigger(ContinuousEventTimeTrigger.of(Duration.ofMillis(30)))
        .process(new SumAtWatermark());
  }
}
