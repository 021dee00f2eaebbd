package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.util.Collector;

/** Each first-input event joined with the second-input events of its key from 10 ms before to 20 ms after it (exclusive). */
public class IntervalJoin implements TwoInputScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> first, DataStream<Event> second) {
    return first
        .keyBy(Event::sharedKey)
        .intervalJoin(second.keyBy(Event::sharedKey))
        .between(Duration.ofMillis(-10), Duration.ofMillis(20))
        .upperBoundExclusive()
        .process(new ProcessJoinFunction<Event, Event, String>() {
          @Override
          public void processElement(Event left, Event right, Context context, Collector<String> out) {
            out.collect(Event.sharedKey(left) + " " + left.value + "@" + context.getLeftTimestamp() + " with " + right.value + "@" + context.getRightTimestamp());
          }
        });
  }
}
