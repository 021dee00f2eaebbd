package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/** 100 ms event-time windows over three partitions that all go idle, then one comes back: each window's key, bounds, sum and the watermark it fired at. */
public class AllPartitionsIdle implements OperatorScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .process(new SumAtWatermark());
  }
}
