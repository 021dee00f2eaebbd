package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** keyBy(key).max('value'): the largest value so far, in the first record's other fields (unlike maxBy). */
public class RollingMax implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .max("value")
        .map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
