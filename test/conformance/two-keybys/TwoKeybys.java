package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;

/** Two keyBys: per-key 100 ms window sums, then keyed by window end, the largest sum of each window (maxBy). */
public class TwoKeybys implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .sum("value")
        .process(new ProcessFunction<Event, Event>() {
          @Override
          public void processElement(Event total, Context context, Collector<Event> out) {
            Event ended = new Event();
            ended.key = total.key;
            ended.value = total.value;
            ended.timestamp = context.timestamp() + 1;
            out.collect(ended);
          }
        })
        .keyBy(total -> total.timestamp)
        .maxBy("value")
        .map(total -> "window ending " + total.timestamp + ": top " + total.key + " " + total.value);
  }
}
