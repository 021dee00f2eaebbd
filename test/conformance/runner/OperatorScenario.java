package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * A scenario whose job ends in one keyed operator, which Flink's keyed operator test harness runs
 * (runner/Harnessed.java): for input that sets the processing time (`time` lines) or comes from
 * several partitions that may go idle (`idle` lines, a partition column).
 */
public interface OperatorScenario {
  SingleOutputStreamOperator<String> apply(DataStream<Event> events);
}
