package dev.sluice.conformance;

import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.AbstractBroadcastStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;

/** Runs a {@link BroadcastScenario} in Flink's keyed broadcast operator test harness, and a {@link NonKeyedBroadcastScenario} in its broadcast one. */
final class Broadcast {
  private Broadcast() {}

  static List<String> run(BroadcastScenario scenario, List<InputLine> input) throws Exception {
    try (var harness = ProcessFunctionTestHarnesses.forKeyedBroadcastProcessFunction(scenario.function(), scenario.key(), Types.STRING, scenario.broadcastStates())) {
      return feed(harness, input);
    }
  }

  static List<String> run(NonKeyedBroadcastScenario scenario, List<InputLine> input) throws Exception {
    try (var harness = ProcessFunctionTestHarnesses.forBroadcastProcessFunction(scenario.function(), scenario.broadcastStates())) {
      return feed(harness, input);
    }
  }

  /** Events whose key starts with `L-` to the first input, the others broadcast, in the input's order; each watermark to both. */
  private static List<String> feed(AbstractBroadcastStreamOperatorTestHarness<Event, Event, String> harness, List<InputLine> input) throws Exception {
    for (InputLine line : input) {
      switch (line.kind()) {
        case EVENT -> {
          if (Event.first(line.event())) harness.processElement(line.event(), line.event().timestamp);
          else harness.processBroadcastElement(line.event(), line.event().timestamp);
        }
        case WATERMARK -> {
          harness.processWatermark(line.time());
          harness.processBroadcastWatermark(line.time());
        }
        default -> throw new IllegalArgumentException("A broadcast scenario takes events and watermarks");
      }
    }
    harness.processWatermark(Watermark.MAX_WATERMARK);
    harness.processBroadcastWatermark(Watermark.MAX_WATERMARK);
    return Harnessed.printed(harness.getOutput());
  }
}
