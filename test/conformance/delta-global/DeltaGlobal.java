package dev.sluice.conformance;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.delta.DeltaFunction;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.evictors.DeltaEvictor;
import org.apache.flink.streaming.api.windowing.triggers.DeltaTrigger;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;

/**
 * A global window per key that fires when a value rises more than 10 above the one of the last
 * firing, over the values less than 15 below the newest.
 */
public class DeltaGlobal implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    DeltaFunction<Event> rise = (older, newer) -> newer.value - older.value;
    return events
        .keyBy(event -> event.key)
        .window(GlobalWindows.create())
        .trigger(DeltaTrigger.of(10, rise, TypeInformation.of(Event.class).createSerializer(new SerializerConfigImpl())))
        .evictor(DeltaEvictor.of(15, (older, newer) -> newer.value - older.value))
        .process(new Values<GlobalWindow>());
  }
}
