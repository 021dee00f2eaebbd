package dev.sluice.conformance;

import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;

/**
 * A scenario of a non-keyed stream connected with a broadcast stream, which Flink's broadcast
 * operator test harness runs (runner/Broadcast.java), fed as a {@link BroadcastScenario} is.
 */
public interface NonKeyedBroadcastScenario {
  BroadcastProcessFunction<Event, Event, String> function();

  MapStateDescriptor<?, ?>[] broadcastStates();
}
