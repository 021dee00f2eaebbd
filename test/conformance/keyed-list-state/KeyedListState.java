package dev.sluice.conformance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** Event-time sorting: a KeyedProcessFunction buffers records in ListState and, at a timer on each record's time, emits those at or before it in time order. */
public class KeyedListState implements Scenario {
  @Override
  public DataStream<String> apply(DataStream<Event> events) {
    return events.keyBy(event -> event.key).process(new Sorter());
  }

  static final class Sorter extends KeyedProcessFunction<String, Event, String> {
    private transient ListState<Event> buffer;

    @Override
    public void open(OpenContext context) {
      buffer = getRuntimeContext().getListState(new ListStateDescriptor<>("buffer", Event.class));
    }

    @Override
    public void processElement(Event event, Context context, Collector<String> out) throws Exception {
      buffer.add(event);
      context.timerService().registerEventTimeTimer(event.timestamp);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext context, Collector<String> out) throws Exception {
      List<Event> due = new ArrayList<>();
      List<Event> kept = new ArrayList<>();
      for (Event event : buffer.get()) (event.timestamp <= timestamp ? due : kept).add(event);
      due.sort(Comparator.comparingLong(event -> event.timestamp));
      for (Event event : due) out.collect(context.getCurrentKey() + " " + event.value + " at " + event.timestamp + " (timer " + timestamp + ")");
      buffer.update(kept);
    }
  }
}
