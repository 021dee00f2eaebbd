package dev.sluice.conformance;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Each window's key, bounds, sum and the watermark it fired at; functions.ts has Sluice's. */
public final class SumAtWatermark extends ProcessWindowFunction<Event, String, String, TimeWindow> {
  @Override
  public void process(String key, Context context, Iterable<Event> elements, Collector<String> out) {
    long sum = 0;
    for (Event event : elements) sum += event.value;
    out.collect(key + " [" + context.window().getStart() + "," + context.window().getEnd() + ") sum " + sum + " at watermark " + context.currentWatermark());
  }
}
