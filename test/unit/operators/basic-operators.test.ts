import { describe, expect, it } from 'vitest';
import {
  ListStateDescriptor,
  MapStateDescriptor,
  OutputTag,
  StateTtlConfig,
  StateVisibility,
  UpdateType,
  ValueStateDescriptor,
  type ListState,
  type MapState,
  type ValueState,
} from '../../../lib/api/index.js';
import { OperatorTestHarness } from '../../../lib/testing/index.js';

interface Reading {
  sensor: string;
  value: number;
}

describe('stateless operators', () => {
  it('map, filter and flatMap transform elements and keep their timestamps', () => {
    const harness = OperatorTestHarness.of<number, string>((input) =>
      input
        .map((n) => n * 10)
        .filter((n) => n !== 20)
        .flatMap((n, { timestamp }) => [`${n}@${timestamp}`, `${n}!`]),
    );
    harness.processElements([
      { value: 1, timestamp: 100 },
      { value: 2, timestamp: 200 },
      { value: 3, timestamp: 300 },
    ]);
    expect(harness.output()).toEqual([
      { value: '10@100', timestamp: 100 },
      { value: '10!', timestamp: 100 },
      { value: '30@300', timestamp: 300 },
      { value: '30!', timestamp: 300 },
    ]);
  });

  it('process sends to side outputs and refuses timers without keyBy', () => {
    const odd = new OutputTag<number>('odd');
    const harness = OperatorTestHarness.of<number, number>(
      (input) =>
        input.process({
          processElement(value, context, out) {
            if (value % 2 === 0) out.collect(value);
            else context.output(odd, value);
          },
        }),
      { sideOutputs: [odd] },
    );
    harness.processElements([1, 2, 3, 4].map((value) => ({ value, timestamp: value })));
    expect(harness.outputValues()).toEqual([2, 4]);
    expect(harness.sideOutput(odd).map((e) => e.value)).toEqual([1, 3]);

    const timers = OperatorTestHarness.of<number, number>((input) =>
      input.process({
        processElement(_value, context) {
          context.timerService().registerEventTimeTimer(10);
        },
      }),
    );
    expect(() => timers.processElement(1, 1)).toThrow(/Timers need a keyed stream: call keyBy/);
  });

  it('union merges streams', () => {
    const harness = OperatorTestHarness.of<number, number>((input) => {
      const evens = input.filter((n) => n % 2 === 0);
      const odds = input.filter((n) => n % 2 === 1).map((n) => n * 100);
      return evens.union(odds).map((n) => n);
    });
    harness.processElements([1, 2, 3].map((value) => ({ value, timestamp: value })));
    expect(harness.outputValues()).toEqual([100, 2, 300]);
  });
});

describe('keyed process functions', () => {
  it('keep ValueState, MapState and ListState per key', () => {
    let count!: ValueState<number>;
    let bySign!: MapState<string, number>;
    let history!: ListState<number>;
    const harness = OperatorTestHarness.of<Reading, string>((input) =>
      input
        .keyBy((r) => r.sensor)
        .process<string>({
          open(state) {
            count = state.getState(new ValueStateDescriptor<number>('count', 0));
            bySign = state.getMapState(new MapStateDescriptor<string, number>('by-sign'));
            history = state.getListState(new ListStateDescriptor<number>('history'));
          },
          processElement(reading, context, out) {
            count.update((count.value() ?? 0) + 1);
            const sign = reading.value >= 0 ? 'positive' : 'negative';
            bySign.put(sign, (bySign.get(sign) ?? 0) + 1);
            history.add(reading.value);
            out.collect(`${context.getCurrentKey()}: ${count.value()} ${JSON.stringify(bySign.entries())} ${history.get().join(',')}`);
          },
        })
        .name('counter'),
    );
    harness.processElements([
      { value: { sensor: 'a', value: 1 }, timestamp: 1 },
      { value: { sensor: 'b', value: -1 }, timestamp: 2 },
      { value: { sensor: 'a', value: -5 }, timestamp: 3 },
    ]);
    expect(harness.outputValues()).toEqual([
      'a: 1 [["positive",1]] 1',
      'b: 1 [["negative",1]] -1',
      'a: 2 [["positive",1],["negative",1]] 1,-5',
    ]);
    expect(harness.stateOf('counter', 'count')).toEqual(
      new Map([
        ['"a"', 2],
        ['"b"', 1],
      ]),
    );
  });

  it('fire event-time timers in order when the watermark passes them, under their key', () => {
    const harness = OperatorTestHarness.of<Reading, string>((input) =>
      input
        .keyBy((r) => r.sensor)
        .process<string>({
          processElement(reading, context) {
            context.timerService().registerEventTimeTimer((context.timestamp ?? 0) + 100);
            context.timerService().registerEventTimeTimer((context.timestamp ?? 0) + 100);
            if (reading.value < 0) context.timerService().deleteEventTimeTimer((context.timestamp ?? 0) + 100);
          },
          onTimer(timestamp, context, out) {
            out.collect(`${context.getCurrentKey()}@${timestamp} ${context.timeDomain} ts=${context.timestamp}`);
          },
        })
        .name('timers'),
    );
    harness.processElements([
      { value: { sensor: 'b', value: 1 }, timestamp: 50 },
      { value: { sensor: 'a', value: 1 }, timestamp: 10 },
      { value: { sensor: 'c', value: -1 }, timestamp: 20 },
    ]);
    expect(harness.timers('timers').eventTime).toEqual([110, 150]);
    harness.processWatermark(109);
    expect(harness.outputValues()).toEqual([]);
    harness.processWatermark(200);
    expect(harness.outputValues()).toEqual(['a@110 EVENT_TIME ts=110', 'b@150 EVENT_TIME ts=150']);
    expect(harness.timers('timers').eventTime).toEqual([]);
  });

  it('fire processing-time timers when processing time advances', () => {
    const harness = OperatorTestHarness.of<Reading, string>((input) =>
      input.keyBy((r) => r.sensor).process<string>({
        processElement(_reading, context) {
          context.timerService().registerProcessingTimeTimer(context.timerService().currentProcessingTime() + 1_000);
        },
        onTimer(timestamp, context, out) {
          out.collect(`${context.getCurrentKey()}@${timestamp} ${context.timeDomain}`);
        },
      }),
      { startTime: 5_000 },
    );
    harness.processElement({ sensor: 'a', value: 1 }, 1);
    harness.advanceProcessingTime(999);
    expect(harness.outputValues()).toEqual([]);
    harness.advanceProcessingTime(1);
    expect(harness.outputValues()).toEqual(['a@6000 PROCESSING_TIME']);
  });

  it('expire state after its TTL in processing time, refreshing on read when asked', () => {
    const ttl = (name: string, configure: (b: ReturnType<typeof StateTtlConfig.newBuilder>) => unknown = () => undefined) => {
      const builder = StateTtlConfig.newBuilder(1_000);
      configure(builder);
      return new ValueStateDescriptor<number>(name).enableTimeToLive(builder.build());
    };
    const descriptors = [
      ttl('on-write'),
      ttl('on-read', (b) => b.setUpdateType(UpdateType.OnReadAndWrite)),
      ttl('stale', (b) => b.setStateVisibility(StateVisibility.ReturnExpiredIfNotCleanedUp)),
    ];
    let states: ValueState<number>[] = [];
    const harness = OperatorTestHarness.of<string, string>((input) =>
      input
        .keyBy(() => 'k')
        .process<string>({
          open(state) {
            states = descriptors.map((d) => state.getState(d));
          },
          processElement(command, _context, out) {
            if (command === 'write') for (const state of states) state.update(1);
            else out.collect(states.map((state) => String(state.value())).join(' '));
          },
        }),
    );
    harness.processElement('write', 0);
    harness.advanceProcessingTime(600).processElement('read', 0);
    harness.advanceProcessingTime(600).processElement('read', 0);
    // on-write expired 1,000 ms after its write; on-read was refreshed by the first read.
    expect(harness.outputValues()).toEqual(['1 1 1', 'undefined 1 1']);
    harness.advanceProcessingTime(1_000).processElement('read', 0);
    expect(harness.outputValues().at(-1)).toBe('undefined undefined 1');
  });
});

describe('rolling aggregations on a keyed stream', () => {
  const readings = [
    { sensor: 'a', value: 3 },
    { sensor: 'a', value: 1 },
    { sensor: 'b', value: 7 },
    { sensor: 'a', value: 5 },
  ].map((value, i) => ({ value, timestamp: i }));

  it.each([
    ['sum', [3, 4, 7, 9]],
    ['min', [3, 1, 7, 1]],
    ['max', [3, 3, 7, 5]],
  ] as const)('%s emits the running result per key', (aggregation, expected) => {
    const harness = OperatorTestHarness.of<Reading, Reading>((input) => input.keyBy((r) => r.sensor)[aggregation]('value'));
    harness.processElements(readings);
    expect(harness.outputValues().map((r) => r.value)).toEqual(expected);
  });

  it('minBy and maxBy emit the whole element holding the extreme', () => {
    const tagged = readings.map(({ value, timestamp }) => ({ value: { ...value, id: timestamp }, timestamp }));
    const minBy = OperatorTestHarness.of<Reading & { id: number }, Reading & { id: number }>((input) => input.keyBy((r) => r.sensor).minBy('value'));
    minBy.processElements(tagged);
    expect(minBy.outputValues().map((r) => r.id)).toEqual([0, 1, 2, 1]);
    const maxBy = OperatorTestHarness.of<Reading & { id: number }, Reading & { id: number }>((input) => input.keyBy((r) => r.sensor).maxBy('value'));
    maxBy.processElements(tagged);
    expect(maxBy.outputValues().map((r) => r.id)).toEqual([0, 0, 2, 3]);
  });

  it('reduce folds with a function of the user', () => {
    const harness = OperatorTestHarness.of<Reading, Reading>((input) =>
      input.keyBy((r) => r.sensor).reduce((a, b) => ({ sensor: a.sensor, value: a.value * b.value })),
    );
    harness.processElements(readings);
    expect(harness.outputValues().map((r) => r.value)).toEqual([3, 3, 7, 15]);
  });
});
