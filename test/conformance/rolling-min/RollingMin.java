package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** keyBy(key).min('value'): the smallest value so far, in the first record's other fields (unlike minBy). */
public class RollingMin implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .min("value")
        .map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
