package dev.sluice.conformance;

import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;

/**
 * A scenario of a keyed stream connected with a broadcast stream, which Flink's keyed broadcast
 * operator test harness runs (runner/Broadcast.java): events whose key starts with `L-` go to the
 * keyed side, the others are broadcast, in the order of the input, and each watermark line to both.
 */
public interface BroadcastScenario {
  KeyedBroadcastProcessFunction<String, Event, Event, String> function();

  KeySelector<Event, String> key();

  MapStateDescriptor<?, ?>[] broadcastStates();
}
