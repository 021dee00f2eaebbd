package dev.sluice.conformance;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.formats.csv.CsvRowDataDeserializationSchema;
import org.apache.flink.formats.csv.CsvRowDataSerializationSchema;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;

/**
 * Reads each case of cases.txt with Flink's csv format, as a table of the columns below, and
 * writes the row it read back: one line per case, `<case> => <values> => <written>`, or
 * `<case> => error`, or `<case> => skipped` under csv.ignore-parse-errors. An `options` line
 * sets the csv.* options of the cases after it.
 */
public final class CsvOnFlink {
  private static final RowType ROW = RowType.of(
      new LogicalType[] {new VarCharType(VarCharType.MAX_LENGTH), new IntType(), new BigIntType(), new DoubleType(), new DecimalType(10, 2),
          new BooleanType(), new TimestampType(3), new LocalZonedTimestampType(3)},
      new String[] {"s", "i", "b", "d", "m", "f", "t", "z"});
  private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

  public static void main(String[] args) throws Exception {
    List<String> output = new ArrayList<>();
    Map<String, String> options = new HashMap<>();
    CsvRowDataDeserializationSchema reader = null;
    CsvRowDataSerializationSchema writer = null;
    for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
      if (line.startsWith("options")) {
        options = new HashMap<>();
        for (String option : line.substring("options".length()).trim().split(" +")) {
          if (option.isEmpty()) continue;
          String[] parts = option.split("=", 2);
          options.put(parts[0], unescape(parts[1]));
        }
        reader = null;
      }
      if (!line.startsWith("read ")) continue;
      if (reader == null) {
        reader = reader(options);
        writer = writer(options);
        reader.open(null);
        writer.open(null);
      }
      byte[] message = unescape(line.substring("read ".length())).getBytes(StandardCharsets.UTF_8);
      try {
        RowData row = reader.deserialize(message);
        if (row == null) {
          output.add(line + " => skipped");
          continue;
        }
        List<String> values = new ArrayList<>();
        for (int i = 0; i < ROW.getFieldCount(); i++) values.add(text(RowData.createFieldGetter(ROW.getTypeAt(i), i).getFieldOrNull(row)));
        output.add(line + " => " + String.join(" | ", values) + " => " + escape(new String(writer.serialize(row), StandardCharsets.UTF_8)));
      } catch (Exception e) {
        output.add(line + " => error");
      }
    }
    Files.write(Path.of(args[1]), output, StandardCharsets.UTF_8);
  }

  private static CsvRowDataDeserializationSchema reader(Map<String, String> options) {
    CsvRowDataDeserializationSchema.Builder builder = new CsvRowDataDeserializationSchema.Builder(ROW, InternalTypeInfo.of(ROW));
    if (options.containsKey("field-delimiter")) builder.setFieldDelimiter(options.get("field-delimiter").charAt(0));
    if (options.containsKey("quote-character")) builder.setQuoteCharacter(options.get("quote-character").charAt(0));
    if ("true".equals(options.get("disable-quote-character"))) builder.disableQuoteCharacter();
    if ("true".equals(options.get("allow-comments"))) builder.setAllowComments(true);
    if ("true".equals(options.get("ignore-parse-errors"))) builder.setIgnoreParseErrors(true);
    if (options.containsKey("escape-character")) builder.setEscapeCharacter(options.get("escape-character").charAt(0));
    if (options.containsKey("null-literal")) builder.setNullLiteral(options.get("null-literal"));
    return builder.build();
  }

  private static CsvRowDataSerializationSchema writer(Map<String, String> options) {
    CsvRowDataSerializationSchema.Builder builder = new CsvRowDataSerializationSchema.Builder(ROW);
    if (options.containsKey("field-delimiter")) builder.setFieldDelimiter(options.get("field-delimiter").charAt(0));
    if (options.containsKey("quote-character")) builder.setQuoteCharacter(options.get("quote-character").charAt(0));
    if ("true".equals(options.get("disable-quote-character"))) builder.disableQuoteCharacter();
    if (options.containsKey("escape-character")) builder.setEscapeCharacter(options.get("escape-character").charAt(0));
    if (options.containsKey("null-literal")) builder.setNullLiteral(options.get("null-literal"));
    if ("false".equals(options.get("write-bigdecimal-in-scientific-notation"))) builder.setWriteBigDecimalInScientificNotation(false);
    return builder.build();
  }

  /** A value as scenarios print it: strings quoted, doubles as Java prints them, timestamps to the millisecond. */
  private static String text(Object value) {
    if (value == null) return "NULL";
    if (value instanceof StringData) return "'" + escape(value.toString()) + "'";
    if (value instanceof DecimalData decimal) return decimal.toBigDecimal().toPlainString();
    if (value instanceof TimestampData timestamp) return TIMESTAMP.format(timestamp.toLocalDateTime());
    if (value instanceof BigDecimal decimal) return decimal.toPlainString();
    return String.valueOf(value);
  }

  private static String unescape(String text) {
    return text.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t").replace("\\s", " ");
  }

  private static String escape(String text) {
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t");
  }
}
