package dev.sluice.conformance;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs a SQL scenario on Flink SQL: the input as the table `events` (k STRING, v BIGINT, and ts
 * TIMESTAMP_LTZ(3), the rowtime, with the input's watermarks as SOURCE_WATERMARK()), the
 * scenario's query.sql over it, in the UTC time zone. Each change of the result is a line:
 * its kind and its fields, as scenarios.ts's sqlLine prints Sluice's.
 */
final class SqlQueries {
  static final String CLASS = "Sql";
  static final String QUERY_FILE = "query.sql";
  private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");
  /** SET 'key' = 'value', which the SQL client runs and executeSql does not: set in the table config, as Sluice's script sets it. */
  private static final Pattern SET = Pattern.compile("(?is)SET\\s+'([^']+)'\\s*=\\s*'([^']*)'");

  private SqlQueries() {}

  /** The query's changes, or the one line `error: …` when Flink rejects it, so that the other scenarios still run. */
  static List<String> runOrExplain(String query, List<InputLine> input) {
    try {
      return run(query, input);
    } catch (Exception e) {
      Throwable cause = e;
      while (cause.getCause() != null) cause = cause.getCause();
      return List.of("error: " + cause.getMessage().lines().findFirst().orElse(""));
    }
  }

  static List<String> run(String query, List<InputLine> input) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    DataStream<Row> rows = Runner.stamped(env, input, "sql")
        .map(event -> Row.of(event.key, event.value))
        .returns(Types.ROW_NAMED(new String[] {"k", "v"}, Types.STRING, Types.LONG));
    StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
    tableEnv.getConfig().set("table.local-time-zone", "UTC");
    Table events = tableEnv.fromDataStream(rows, Schema.newBuilder()
        .column("k", DataTypes.STRING())
        .column("v", DataTypes.BIGINT())
        .columnByMetadata("ts", DataTypes.TIMESTAMP_LTZ(3), "rowtime")
        .watermark("ts", "SOURCE_WATERMARK()")
        .build());
    tableEnv.createTemporaryView("events", events);
    // Statements before the query (CREATE VIEW …) end with a semicolon at the end of a line.
    String[] statements = query.trim().replaceAll(";$", "").split(";\\s*\\n");
    for (int i = 0; i < statements.length - 1; i++) {
      Matcher set = SET.matcher(statements[i].trim());
      if (set.matches()) tableEnv.getConfig().set(set.group(1), set.group(2));
      else tableEnv.executeSql(statements[i]);
    }
    Table result = tableEnv.sqlQuery(statements[statements.length - 1]);
    List<String> output = new ArrayList<>();
    try (CloseableIterator<Row> changes = tableEnv.toChangelogStream(result).executeAndCollect()) {
      changes.forEachRemaining(row -> output.add(line(row)));
    }
    return output;
  }

  static String line(Row row) {
    return row.getKind().shortString() + "[" + IntStream.range(0, row.getArity()).mapToObj(i -> text(row.getField(i))).collect(Collectors.joining(", ")) + "]";
  }

  private static String text(Object value) {
    if (value instanceof Instant instant) return TIMESTAMP.format(LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    if (value instanceof LocalDateTime time) return TIMESTAMP.format(time);
    if (value instanceof BigDecimal decimal) return decimal.toPlainString();
    return String.valueOf(value);
  }
}
