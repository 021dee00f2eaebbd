package dev.sluice.conformance;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.util.Collector;

/** Each firing's key and the values the window function sees, in order; functions.ts has Sluice's. */
public final class Values<W extends Window> extends ProcessWindowFunction<Event, String, String, W> {
  @Override
  public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
    List<Long> values = new ArrayList<>();
    for (Event event : elements) values.add(event.value);
    out.collect(key + " " + values);
  }
}
