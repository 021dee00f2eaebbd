package dev.sluice.conformance;

/** One input record of a scenario: a key, a number and an event time; or, with `watermark`, a watermark at `timestamp`. */
public class Event {
  public String key;
  public long value;
  public long timestamp;
  public boolean watermark;

  public Event() {}

  static Event parse(String line) {
    String[] fields = line.split(",");
    Event event = new Event();
    if (fields[0].equals("watermark")) {
      event.watermark = true;
      event.timestamp = Long.parseLong(fields[1]);
    } else {
      event.key = fields[1];
      event.value = Long.parseLong(fields[2]);
      event.timestamp = Long.parseLong(fields[3]);
    }
    return event;
  }

  @Override
  public String toString() {
    return key + " " + value + " @" + timestamp;
  }

  /** A reduce: the sum of the values and the latest event time; functions.ts has Sluice's. */
  static Event sumWithLatest(Event a, Event b) {
    Event sum = new Event();
    sum.key = a.key;
    sum.value = a.value + b.value;
    sum.timestamp = Math.max(a.timestamp, b.timestamp);
    return sum;
  }

  /** Whether a two-input scenario's event belongs to its first input: its key starts with `L-`; functions.ts has Sluice's. */
  static boolean first(Event event) {
    return event.key.startsWith("L-");
  }

  /** The key two inputs share: the event's key without its `L-` or `R-`. */
  static String sharedKey(Event event) {
    return event.key.substring(2);
  }
}
