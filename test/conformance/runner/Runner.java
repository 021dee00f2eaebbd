package dev.sluice.conformance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

/**
 * Runs scenarios in Flink's local environment, one job each, with parallelism 1: the input's
 * events in order, each watermark line emitted as a watermark right where it stands (no
 * periodic watermarks), and Flink's final watermark at the end of the bounded input. Writes
 * each output record as `timestamp<TAB>value` to the file given beside the scenario's folder.
 * An {@link OperatorScenario} runs in Flink's keyed operator test harness instead (Harnessed),
 * a {@link TwoInputScenario} in its two-input one (TwoInputs), and a {@link BroadcastScenario}
 * or {@link NonKeyedBroadcastScenario} in its (keyed) broadcast one (Broadcast), and a SQL
 * scenario (class name {@code Sql}) in Flink SQL (SqlQueries).
 * Usage: Runner <scenario-folder> <ClassName> <output-file> [...].
 */
public final class Runner {
  public static void main(String[] args) throws Exception {
    for (int i = 0; i + 2 < args.length; i += 3) {
      Path folder = Path.of(args[i]);
      List<InputLine> input = new ArrayList<>();
      for (String line : Files.readAllLines(folder.resolve("input.csv"))) if (!line.isBlank() && !line.startsWith("#")) input.add(InputLine.parse(line.trim()));
      if (args[i + 1].equals(SqlQueries.CLASS)) {
        Files.write(Path.of(args[i + 2]), SqlQueries.runOrExplain(Files.readString(folder.resolve(SqlQueries.QUERY_FILE)), input));
        continue;
      }
      Object scenario = Class.forName("dev.sluice.conformance." + args[i + 1]).getDeclaredConstructor().newInstance();
      List<String> lines = scenario instanceof OperatorScenario harnessed ? Harnessed.run(harnessed, input)
          : scenario instanceof TwoInputScenario twoInputs ? TwoInputs.run(twoInputs, input)
          : scenario instanceof BroadcastScenario broadcast ? Broadcast.run(broadcast, input)
          : scenario instanceof NonKeyedBroadcastScenario broadcast ? Broadcast.run(broadcast, input)
          : run((Scenario) scenario, input);
      Files.write(Path.of(args[i + 2]), lines);
    }
  }

  static List<String> run(Scenario scenario, List<InputLine> input) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    DataStream<Event> stamped = stamped(env, input, scenario.getClass().getSimpleName());
    List<String> output = new ArrayList<>();
    try (CloseableIterator<String> results = scenario.apply(stamped).process(new WithTimestamp()).executeAndCollect()) {
      results.forEachRemaining(output::add);
    }
    return output;
  }

  /** The input's events with their timestamps, and each watermark line as a watermark where it stands. */
  static DataStream<Event> stamped(StreamExecutionEnvironment env, List<InputLine> input, String scenario) {
    if (!input.stream().allMatch(InputLine::fitsOneBoundedSource)) {
      throw new IllegalArgumentException(scenario + ": time, idle and partitioned lines need an OperatorScenario, which Flink's operator test harness runs");
    }
    List<Event> events = input.stream().map(InputLine::event).toList();
    return env.fromData(events)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.<Event>forGenerator(context -> new Punctuated()).withTimestampAssigner((event, previous) -> event.timestamp))
        .filter(event -> !event.watermark);
  }

  /** Emits a watermark for each watermark line, and nothing on the clock. */
  static final class Punctuated implements WatermarkGenerator<Event> {
    @Override
    public void onEvent(Event event, long timestamp, WatermarkOutput output) {
      if (event.watermark) output.emitWatermark(new Watermark(event.timestamp));
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {}
  }

  static final class WithTimestamp extends ProcessFunction<String, String> {
    @Override
    public void processElement(String value, Context context, Collector<String> out) {
      out.collect(context.timestamp() + "\t" + value);
    }
  }
}
