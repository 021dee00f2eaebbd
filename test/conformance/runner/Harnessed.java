package dev.sluice.conformance;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

/**
 * Runs an {@link OperatorScenario}'s keyed operator in Flink's KeyedOneInputStreamOperatorTestHarness:
 *
 * <ul>
 *   <li>A `time` line sets the harness's processing time and state TTL clock, firing the timers due.
 *   <li>Partitions are a Kafka source's splits: each partition's watermarks and idle marks go to
 *       its output of Flink's WatermarkOutputMultiplexer, as a source's punctuated generator
 *       emits them (the immediate output), and the combined watermark and idleness reach the
 *       operator.
 * </ul>
 *
 * The input ends as a bounded source ends: the final watermark.
 */
final class Harnessed {
  private Harnessed() {}

  @SuppressWarnings("unchecked")
  static <K> List<String> run(OperatorScenario scenario, List<InputLine> input) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    OneInputTransformation<Event, String> operator =
        (OneInputTransformation<Event, String>) scenario.apply(env.fromData(List.of(new Event()), TypeInformation.of(Event.class))).getTransformation();
    if (operator.getStateKeySelector() == null) throw new IllegalArgumentException("An OperatorScenario ends in a keyed operator");
    try (KeyedOneInputStreamOperatorTestHarness<K, Event, String> harness = new KeyedOneInputStreamOperatorTestHarness<>(
        (StreamOperatorFactory<String>) operator.getOperatorFactory(), (KeySelector<Event, K>) operator.getStateKeySelector(), (TypeInformation<K>) operator.getStateKeyType())) {
      harness.open();
      WatermarkOutputMultiplexer partitions = new WatermarkOutputMultiplexer(combinedInto(harness));
      int partitionCount = 1 + input.stream().mapToInt(InputLine::partition).max().orElse(0);
      for (int partition = 0; partition < partitionCount; partition++) partitions.registerNewOutput(Integer.toString(partition));
      for (InputLine line : input) {
        WatermarkOutput partition = partitions.getImmediateOutput(Integer.toString(line.partition()));
        switch (line.kind()) {
          case EVENT -> harness.processElement(line.event(), line.event().timestamp);
          case WATERMARK -> partition.emitWatermark(new Watermark(line.time()));
          case IDLE -> partition.markIdle();
          case TIME -> {
            harness.setStateTtlProcessingTime(line.time());
            harness.setProcessingTime(line.time());
          }
        }
      }
      harness.processWatermark(org.apache.flink.streaming.api.watermark.Watermark.MAX_WATERMARK);
      return printed(harness.getOutput());
    }
  }

  private static WatermarkOutput combinedInto(KeyedOneInputStreamOperatorTestHarness<?, Event, String> harness) {
    return new WatermarkOutput() {
      @Override
      public void emitWatermark(Watermark watermark) {
        rethrowing(() -> harness.processWatermark(watermark.getTimestamp()));
      }

      @Override
      public void markIdle() {
        rethrowing(() -> harness.processWatermarkStatus(WatermarkStatus.IDLE));
      }

      @Override
      public void markActive() {
        rethrowing(() -> harness.processWatermarkStatus(WatermarkStatus.ACTIVE));
      }
    };
  }

  private interface HarnessStep {
    void run() throws Exception;
  }

  private static void rethrowing(HarnessStep step) {
    try {
      step.run();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The output records as the runner prints them, `timestamp<TAB>value`; watermarks and statuses left out. */
  static List<String> printed(Iterable<Object> output) {
    List<String> lines = new ArrayList<>();
    for (Object element : output) {
      if (element instanceof StreamRecord<?> record) lines.add((record.hasTimestamp() ? Long.toString(record.getTimestamp()) : "null") + "\t" + record.getValue());
    }
    return lines;
  }
}
