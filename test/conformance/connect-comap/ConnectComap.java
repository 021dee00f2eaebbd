package dev.sluice.conformance;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.co.CoMapFunction;

/** Two streams connected, each mapped by its own function. */
public class ConnectComap implements TwoInputScenario {
  @Override
  public SingleOutputStreamOperator<String> apply(DataStream<Event> first, DataStream<Event> second) {
    return first.connect(second).map(new CoMapFunction<Event, Event, String>() {
      @Override
      public String map1(Event event) {
        return "first " + event.key + " " + event.value;
      }

      @Override
      public String map2(Event event) {
        return "second " + event.key + " " + (event.value * 10);
      }
    });
  }
}
