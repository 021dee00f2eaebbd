package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** keyBy(key).maxBy('value', false): the record with the largest value so far, the latest of a tie. */
public class RollingMaxbyLast implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .maxBy("value", false)
        .map(event -> event.key + " " + event.value + " from " + event.timestamp);
  }
}
