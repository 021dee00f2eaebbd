package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;

/** A conformance scenario's job: from the input events (timestamps and watermarks assigned) to the lines it outputs. */
public interface Scenario {
  DataStream<String> apply(DataStream<Event> events);
}
