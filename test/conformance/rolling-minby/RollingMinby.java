package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** keyBy(key).minBy("value"): the whole record with the smallest value so far, the first of a tie. */
public class RollingMinby implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).minBy("value").map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
