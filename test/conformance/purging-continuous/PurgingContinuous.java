package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;

/** Tumbling 100 ms windows firing every 40 ms and emptied at each firing: sum/count of each slice. */
public class PurgingContinuous implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .trigger(PurgingTrigger.of(ContinuousEventTimeTrigger.of(Duration.ofMillis(40))))
        .aggregate(new SumCount());
  }
}
