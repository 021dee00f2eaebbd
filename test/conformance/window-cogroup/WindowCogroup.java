package dev.sluice.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.CoGroupFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.Collector;

/** A window coGroup: per key and 100 ms window, both inputs' values, either side possibly empty. */
public class WindowCogroup implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.filter(Event::first)
        .coGroup(events.filter(event -> !Event.first(event)))
        .where(Event::sharedKey)
        .equalTo(Event::sharedKey)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(100)))
        .apply(new CoGroupFunction<Event, Event, String>() {
          @Override
          public void coGroup(Iterable<Event> first, Iterable<Event> second, Collector<String> out) {
            List<Long> one = new ArrayList<>();
            List<Long> two = new ArrayList<>();
            for (Event event : first) one.add(event.value);
            for (Event event : second) two.add(event.value);
            out.collect(one + " / " + two);
          }
        });
  }
}
