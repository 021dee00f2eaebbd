package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Event-time timers of several keys that one watermark makes due fire in timestamp order, each at its own time. */
public class TimersAcrossKeys implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new KeyedProcessFunction<String, Event, String>() {
      @Override
      public void processElement(Event event, Context context, Collector<String> out) {
        context.timerService().registerEventTimeTimer(event.timestamp + event.value * 100);
      }

      @Override
      public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) {
        out.collect(context.getCurrentKey() + " timer " + timestamp + " watermark " + context.timerService().currentWatermark());
      }
    });
  }
}
