package dev.sluice.conformance;

/**
 * One line of a scenario's input.csv: `event,key,value,timestamp[,partition]`,
 * `watermark,timestamp[,partition]`, `idle,partition` (the partition's generator marks it idle)
 * or `time,ms` (processing time is now ms).
 */
record InputLine(Kind kind, Event event, long time, int partition) {
  enum Kind { EVENT, WATERMARK, IDLE, TIME }

  static InputLine parse(String line) {
    String[] fields = line.split(",");
    return switch (fields[0]) {
      case "event" -> {
        Event event = Event.parse(line);
        yield new InputLine(Kind.EVENT, event, event.timestamp, partitionAt(fields, 4));
      }
      case "watermark" -> new InputLine(Kind.WATERMARK, Event.parse(line), Long.parseLong(fields[1]), partitionAt(fields, 2));
      case "idle" -> new InputLine(Kind.IDLE, null, 0, Integer.parseInt(fields[1]));
      case "time" -> new InputLine(Kind.TIME, null, Long.parseLong(fields[1]), 0);
      default -> throw new IllegalArgumentException("Unknown input line: " + line);
    };
  }

  private static int partitionAt(String[] fields, int index) {
    return fields.length > index ? Integer.parseInt(fields[index]) : 0;
  }

  /** Whether the whole-job runner can feed it: one partition, event time only. */
  boolean fitsOneBoundedSource() {
    return (kind == Kind.EVENT || kind == Kind.WATERMARK) && partition == 0;
  }
}
