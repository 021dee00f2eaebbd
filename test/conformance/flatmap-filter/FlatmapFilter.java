package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/** Stateless: filter values above 1, flatMap each into as many copies as its value modulo 3, map to text. */
public class FlatmapFilter implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events
        .filter(event -> event.value > 1)
        .process(new ProcessFunction<Event, String>() {
          @Override
          public void processElement(Event event, Context context, Collector<String> out) {
            for (long copy = 0; copy < event.value % 3; copy++) {
              out.collect(event.key + " " + event.value + " copy " + copy + " at " + context.timestamp());
            }
          }
        });
  }
}
