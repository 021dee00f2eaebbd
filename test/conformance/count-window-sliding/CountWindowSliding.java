package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;

/** Sliding count windows: every 2 elements of a key, the last 4 (a count trigger and a count evictor). */
public class CountWindowSliding implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).countWindow(4, 2).process(new Values<GlobalWindow>());
  }
}
