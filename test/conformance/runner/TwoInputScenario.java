package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * A scenario whose job ends in one operator of two inputs (connect, a co-process function, an
 * interval join), which Flink's two-input operator test harness runs (runner/TwoInputs.java):
 * events whose key starts with `L-` go to the first input, the others to the second, in the
 * order of the input, so that the two inputs interleave as they do in the file.
 */
public interface TwoInputScenario {
  SingleOutputStreamOperator<String> apply(DataStream<Event> first, DataStream<Event> second);
}
