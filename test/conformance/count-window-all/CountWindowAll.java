package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** Count windows of 3 over the whole stream: the sum and latest event time of every 3 elements. */
public class CountWindowAll implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.countWindowAll(3).reduce(Event::sumWithLatest).map(event -> event.key + " " + event.value + " latest " + event.timestamp);
  }
}
