package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Count windows of 3 per key (global windows, a purging count trigger): the sum and latest event time of each. */
public class CountWindow implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .countWindow(3)
        .reduce(Event::sumWithLatest)
        .map(event -> event.key + " " + event.value + " latest " + event.timestamp);
  }
}
