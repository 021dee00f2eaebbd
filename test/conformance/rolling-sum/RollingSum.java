package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** keyBy(key).sum("value"): every record's running sum, with the first record's other fields. */
public class RollingSum implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).sum("value").map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
