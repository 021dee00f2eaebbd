package dev.sluice.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * Runs Nexmark SQL scripts on Flink SQL in this JVM, one after the other: each script's SET
 * statements configure its job, its CREATE statements declare its tables, and its INSERT runs
 * until its bounded Kafka reads end and its last checkpoint commits the sink's transactions.
 * For each script, prints one line: {"script": …, "cpuMs": …, "wallMs": …}, the CPU this
 * process spent while the job ran. Running a small script first leaves JIT compilation and
 * class loading out of the next one's figures, as Sluice's handler bench leaves out its warm-up.
 *
 * Arguments: parallelism script.sql [script.sql …]
 */
public final class NexmarkSqlJob {
  private static final Pattern SET = Pattern.compile("(?is)^SET\\s+'([^']+)'\\s*=\\s*'([^']*)'$");

  private NexmarkSqlJob() {}

  public static void main(String[] args) throws Exception {
    int parallelism = Integer.parseInt(args[0]);
    for (int i = 1; i < args.length; i++) {
      long cpuBefore = processCpuNanos();
      long wallBefore = System.nanoTime();
      run(Files.readString(Path.of(args[i])), parallelism);
      long cpuMs = (processCpuNanos() - cpuBefore) / 1_000_000;
      long wallMs = (System.nanoTime() - wallBefore) / 1_000_000;
      System.out.println("{\"script\":\"" + args[i] + "\",\"cpuMs\":" + cpuMs + ",\"wallMs\":" + wallMs + "}");
    }
    System.exit(0);
  }

  static void run(String script, int parallelism) throws Exception {
    Configuration configuration = new Configuration();
    List<String> statements = new ArrayList<>();
    for (String statement : statements(script)) {
      Matcher set = SET.matcher(statement);
      if (set.matches()) configuration.setString(set.group(1), set.group(2));
      else statements.add(statement);
    }
    configuration.setString("table.local-time-zone", "UTC");
    // A failure ends the run with its cause, instead of restarting the job forever.
    configuration.setString("restart-strategy.type", "none");
    // Checkpoints to local files: the JobManager's memory refuses state over 5 MB (q17's keys).
    configuration.setString("execution.checkpointing.storage", "filesystem");
    configuration.setString("execution.checkpointing.dir", Files.createTempDirectory("nexmark-checkpoints").toUri().toString());
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(configuration);
    env.setParallelism(parallelism);
    StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
    TableResult last = null;
    for (String statement : statements) last = tableEnv.executeSql(statement);
    if (last != null) last.await();
  }

  /** The script's statements: split at each ';' that ends a line, with `--` comments removed. */
  static List<String> statements(String script) {
    List<String> statements = new ArrayList<>();
    String uncommented = script.replaceAll("(?m)--.*$", "");
    for (String statement : uncommented.split(";\\s*(\\n|$)")) {
      if (!statement.isBlank()) statements.add(statement.trim());
    }
    return statements;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }
}
