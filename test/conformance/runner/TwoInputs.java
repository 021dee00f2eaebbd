package dev.sluice.conformance;

import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.TwoInputStreamOperator;
import org.apache.flink.streaming.api.transformations.TwoInputTransformation;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.TwoInputStreamOperatorTestHarness;

/**
 * Runs a {@link TwoInputScenario}'s operator in Flink's (keyed) two-input operator test harness:
 * each event to its input, each watermark line to both, and the final watermark at the end.
 */
final class TwoInputs {
  private TwoInputs() {}

  @SuppressWarnings("unchecked")
  static <K> List<String> run(TwoInputScenario scenario, List<InputLine> input) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    DataStream events = env.fromData(List.of(new Event()), TypeInformation.of(Event.class));
    TwoInputTransformation<Event, Event, String> transformation =
        (TwoInputTransformation<Event, Event, String>) scenario.apply(events, events).getTransformation();
    TwoInputStreamOperator<Event, Event, String> operator =
        (TwoInputStreamOperator<Event, Event, String>) ((SimpleOperatorFactory<String>) transformation.getOperatorFactory()).getOperator();
    try (TwoInputStreamOperatorTestHarness<Event, Event, String> harness = transformation.getStateKeySelector1() == null
        ? new TwoInputStreamOperatorTestHarness<>(operator)
        : new KeyedTwoInputStreamOperatorTestHarness<>(operator, (KeySelector<Event, K>) transformation.getStateKeySelector1(),
            (KeySelector<Event, K>) transformation.getStateKeySelector2(), (TypeInformation<K>) transformation.getStateKeyType())) {
      harness.open();
      for (InputLine line : input) {
        switch (line.kind()) {
          case EVENT -> {
            if (line.event().key.startsWith("L-")) harness.processElement1(line.event(), line.event().timestamp);
            else harness.processElement2(line.event(), line.event().timestamp);
          }
          case WATERMARK -> harness.processBothWatermarks(new Watermark(line.time()));
          default -> throw new IllegalArgumentException("A two-input scenario takes events and watermarks");
        }
      }
      harness.processBothWatermarks(Watermark.MAX_WATERMARK);
      return Harnessed.printed(harness.getOutput());
    }
  }
}
