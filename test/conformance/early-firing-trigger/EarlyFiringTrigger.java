package dev.sluice.conformance;

import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/** A trigger of the user's own: fires early at a value of 10 or more, fires and purges at the window's end. */
public class EarlyFiringTrigger implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .keyBy(event -> event.key)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .trigger(new EarlyOnLargeValues())
        .aggregate(new SumCount());
  }

  static final class EarlyOnLargeValues extends Trigger<Event, TimeWindow> {
    @Override
    public TriggerResult onElement(Event event, long timestamp, TimeWindow window, TriggerContext context) {
      context.registerEventTimeTimer(window.maxTimestamp());
      return event.value >= 10 ? TriggerResult.FIRE : TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext context) {
      return time == window.maxTimestamp() ? TriggerResult.FIRE_AND_PURGE : TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext context) {
      return TriggerResult.CONTINUE;
    }

    @Override
    public void clear(TimeWindow window, TriggerContext context) {
      context.deleteEventTimeTimer(window.maxTimestamp());
    }
  }
}
