import { describe, expect, it } from 'vitest';
import {
  EventTimeSessionWindows,
  OutputTag,
  ProcessingTimeSessionWindows,
  SlidingEventTimeWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  ValueStateDescriptor,
  type AggregateFunction,
} from '../../../lib/api/index.js';
import { OperatorTestHarness } from '../../../lib/testing/index.js';

interface Sale {
  shop: string;
  amount: number;
}

const sale = (shop: string, amount: number, timestamp: number) => ({ value: { shop, amount }, timestamp });
const windowed = (label: string, start: number, end: number, amount: number) => `${label} [${start},${end}) ${amount}`;

const average: AggregateFunction<Sale, { sum: number; count: number }, number> = {
  createAccumulator: () => ({ sum: 0, count: 0 }),
  add: (s, acc) => ({ sum: acc.sum + s.amount, count: acc.count + 1 }),
  getResult: (acc) => acc.sum / acc.count,
  merge: (a, b) => ({ sum: a.sum + b.sum, count: a.count + b.count }),
};

describe('tumbling event-time windows', () => {
  it('sum out-of-order elements and fire when the watermark passes the window end', () => {
    const harness = OperatorTestHarness.of<Sale, Sale>((input) =>
      input.keyBy((s) => s.shop).window(TumblingEventTimeWindows.of(100)).sum('amount').name('totals'),
    );
    harness.processElements([sale('a', 1, 50), sale('a', 2, 10), sale('b', 5, 120), sale('a', 3, 99), sale('a', 4, 100)]);
    harness.processWatermark(98);
    expect(harness.output()).toEqual([]);
    expect(harness.timers('totals').eventTime).toEqual([99, 199, 199]);
    harness.processWatermark(99);
    expect(harness.output()).toEqual([{ value: { shop: 'a', amount: 6 }, timestamp: 99 }]);
    harness.processWatermark(250);
    expect(harness.outputValues().slice(1)).toEqual([
      { shop: 'a', amount: 4 },
      { shop: 'b', amount: 5 },
    ]);
    expect(harness.stateOf('totals', 'windows').size).toBe(0);
  });

  it('fire again for each late element within the allowed lateness, and side-output later ones', () => {
    const late = new OutputTag<Sale>('late');
    const harness = OperatorTestHarness.of<Sale, Sale>(
      (input) =>
        input
          .keyBy((s) => s.shop)
          .window(TumblingEventTimeWindows.of(100))
          .allowedLateness(50)
          .sideOutputLateData(late)
          .sum('amount'),
      { sideOutputs: [late] },
    );
    harness.processElements([sale('a', 1, 10)]).processWatermark(120);
    expect(harness.outputValues()).toEqual([{ shop: 'a', amount: 1 }]);
    harness.processElements([sale('a', 2, 20)]);
    expect(harness.outputValues()).toEqual([
      { shop: 'a', amount: 1 },
      { shop: 'a', amount: 3 },
    ]);
    // The window [0, 100) takes elements until the watermark reaches 99 + 50 = 149.
    harness.processWatermark(148);
    harness.processElements([sale('a', 4, 30)]);
    expect(harness.outputValues().at(-1)).toEqual({ shop: 'a', amount: 7 });
    harness.processWatermark(149);
    harness.processElements([sale('a', 8, 40)]);
    expect(harness.outputValues()).toHaveLength(3);
    expect(harness.sideOutput(late)).toEqual([sale('a', 8, 40)]);
  });

  it('drop late elements and count them when there is no late side output', () => {
    const harness = OperatorTestHarness.of<Sale, Sale>((input) =>
      input.keyBy((s) => s.shop).window(TumblingEventTimeWindows.of(100)).sum('amount'),
    );
    harness.processElements([sale('a', 1, 10)]).processWatermark(200);
    harness.processElements([sale('a', 2, 20), sale('a', 3, 30)]);
    expect(harness.outputValues()).toEqual([{ shop: 'a', amount: 1 }]);
    expect(harness.metrics().lateRecordsDropped).toBe(2);
  });

  it('aggregate with an accumulator and a process window function that sees the window', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(TumblingEventTimeWindows.of(100))
        .aggregate(average, (shop, context, [mean], out) => {
          out.collect(windowed(shop, context.window.start, context.window.end, mean ?? NaN));
        }),
    );
    harness.processElements([sale('a', 1, 1), sale('a', 2, 2), sale('a', 6, 3)]).processWatermark(1_000);
    expect(harness.outputValues()).toEqual([windowed('a', 0, 100, 3)]);
  });

  it('process every element of a window at once', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(TumblingEventTimeWindows.of(100))
        .process((shop, context, sales, out) => {
          out.collect(`${shop} ${context.window.start}: ${sales.map((s) => s.amount).join('+')}`);
        }),
    );
    harness.processElements([sale('a', 1, 1), sale('a', 2, 2), sale('a', 3, 150)]).processWatermark(1_000);
    expect(harness.outputValues()).toEqual(['a 0: 1+2', 'a 100: 3']);
  });

  it('reduce, min, max, minBy and maxBy per window', () => {
    const elements = [sale('a', 5, 1), sale('a', 2, 2), sale('a', 9, 3)];
    const results = (['min', 'max', 'minBy', 'maxBy'] as const).map((aggregation) => {
      const harness = OperatorTestHarness.of<Sale, Sale>((input) =>
        input.keyBy((s) => s.shop).window(TumblingEventTimeWindows.of(100))[aggregation]('amount'),
      );
      return harness.processElements(elements).processWatermark(100).outputValues()[0]?.amount;
    });
    expect(results).toEqual([2, 9, 2, 9]);
    const reduce = OperatorTestHarness.of<Sale, Sale>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(TumblingEventTimeWindows.of(100))
        .reduce((a, b) => ({ shop: a.shop, amount: a.amount * b.amount })),
    );
    expect(reduce.processElements(elements).processWatermark(100).outputValues()).toEqual([{ shop: 'a', amount: 90 }]);
  });
});

describe('sliding event-time windows', () => {
  it('put each element into every window that covers it', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(SlidingEventTimeWindows.of(100, 50))
        .reduce<string>(
          (a, b) => ({ shop: a.shop, amount: a.amount + b.amount }),
          (shop, context, [total], out) => {
            out.collect(windowed(shop, context.window.start, context.window.end, total?.amount ?? 0));
          },
        ),
    );
    harness.processElements([sale('a', 1, 10), sale('a', 2, 60), sale('a', 4, 120)]).processWatermark(1_000);
    expect(harness.outputValues()).toEqual([
      windowed('a', -50, 50, 1),
      windowed('a', 0, 100, 3),
      windowed('a', 50, 150, 6),
      windowed('a', 100, 200, 4),
    ]);
  });
});

describe('window minBy and maxBy', () => {
  it('keep the first element of a tie, or with first false the last, as Flink', () => {
    type Bid = Sale & { bidder: string };
    const bids = ['ann', 'bob', 'cy', 'dee'].map((bidder, i) => ({ value: { shop: 'a', amount: [3, 9, 9, 4][i] ?? 0, bidder }, timestamp: i }));
    const winner = (first: boolean) => {
      const harness = OperatorTestHarness.of<Bid, Bid>((input) => input.keyBy((b) => b.shop).window(TumblingEventTimeWindows.of(100)).maxBy('amount', first));
      harness.processElements(bids).processWatermark(99);
      return harness.outputValues().map((b) => b.bidder);
    };
    expect(winner(true)).toEqual(['bob']);
    expect(winner(false)).toEqual(['cy']);
  });
});

describe('event-time session windows', () => {
  it('merge sessions that an element bridges, and fire once the gap has passed', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(EventTimeSessionWindows.withGap(30))
        .process<string>((shop, context, sales, out) => {
          out.collect(`${shop} [${context.window.start},${context.window.end}) ${sales.map((s) => s.amount).join('+')}`);
        })
        .name('sessions'),
    );
    harness.processElements([sale('a', 1, 0), sale('a', 2, 50), sale('b', 7, 5)]);
    expect(harness.stateOf('sessions', 'windows').get('"a"')).toEqual({ '0:30': [{ shop: 'a', amount: 1 }], '50:80': [{ shop: 'a', amount: 2 }] });
    harness.processElements([sale('a', 3, 25)]);
    expect(Object.keys(harness.stateOf('sessions', 'windows').get('"a"') as object)).toEqual(['0:80']);
    expect(harness.timers('sessions').eventTime).toEqual([34, 79]);
    harness.processWatermark(100);
    expect(harness.outputValues()).toEqual(['b [5,35) 7', 'a [0,80) 1+2+3']);
  });

  it('take an element whose own session is late into the open session it overlaps, as Flink merges before judging lateness', () => {
    const late = new OutputTag<Sale>('late');
    const harness = OperatorTestHarness.of<Sale, string>(
      (input) =>
        input
          .keyBy((s) => s.shop)
          .window(EventTimeSessionWindows.withGap(30))
          .sideOutputLateData(late)
          .process<string>((shop, context, sales, out) => {
            out.collect(`${shop} [${context.window.start},${context.window.end}) ${sales.map((s) => s.amount).join('+')}`);
          })
          .name('sessions'),
      { sideOutputs: [late] },
    );
    harness.processElements([sale('a', 1, 100)]).processWatermark(110);
    // [70, 100) alone ends before the watermark, but it touches the open session [100, 130).
    harness.processElements([sale('a', 2, 70)]);
    expect(Object.keys(harness.stateOf('sessions', 'windows').get('"a"') as object)).toEqual(['70:130']);
    // [20, 50) touches no open session: it is late.
    harness.processElements([sale('a', 4, 20)]).processWatermark(200);
    expect(harness.outputValues()).toEqual(['a [70,130) 1+2']);
    expect(harness.sideOutput(late)).toEqual([sale('a', 4, 20)]);
  });

  it('merge aggregate accumulators', () => {
    const harness = OperatorTestHarness.of<Sale, number>((input) =>
      input.keyBy((s) => s.shop).window(EventTimeSessionWindows.withGap(10)).aggregate(average),
    );
    harness.processElements([sale('a', 2, 0), sale('a', 4, 18), sale('a', 9, 9), sale('a', 100, 100)]).processWatermark(1_000);
    expect(harness.outputValues()).toEqual([5, 100]);
  });
});

describe('processing-time windows', () => {
  it('tumble on the clock, whatever the elements’ timestamps', () => {
    const harness = OperatorTestHarness.of<Sale, Sale>(
      (input) => input.keyBy((s) => s.shop).window(TumblingProcessingTimeWindows.of(1_000)).sum('amount'),
      { startTime: 10_500 },
    );
    harness.processElements([sale('a', 1, 1), sale('a', 2, 999_999)]);
    harness.advanceProcessingTime(498);
    expect(harness.output()).toEqual([]);
    // The window [10000, 11000) fires when the clock reaches its last millisecond.
    harness.advanceProcessingTime(1).processElements([sale('a', 4, 0)]);
    expect(harness.output()).toEqual([{ value: { shop: 'a', amount: 3 }, timestamp: 10_999 }]);
    harness.advanceProcessingTime(1_000);
    expect(harness.outputValues().at(-1)).toEqual({ shop: 'a', amount: 4 });
  });

  it('close sessions after a quiet gap on the clock', () => {
    const harness = OperatorTestHarness.of<Sale, Sale>((input) =>
      input.keyBy((s) => s.shop).window(ProcessingTimeSessionWindows.withGap(100)).sum('amount'),
    );
    harness.processElements([sale('a', 1, 0)]).advanceProcessingTime(60);
    harness.processElements([sale('a', 2, 0)]).advanceProcessingTime(98);
    expect(harness.output()).toEqual([]);
    harness.advanceProcessingTime(1);
    expect(harness.outputValues()).toEqual([{ shop: 'a', amount: 3 }]);
  });
});

describe('window configuration errors', () => {
  it('are reported when the pipeline is built', () => {
    expect(() => TumblingEventTimeWindows.of(0)).toThrow(/size must be a positive whole number/);
    expect(() => SlidingEventTimeWindows.of(100, 200)).toThrow(/slide \(200 ms\) must not exceed its size \(100 ms\)/);
    expect(() =>
      OperatorTestHarness.of<Sale, number>((input) =>
        input
          .keyBy((s) => s.shop)
          .window(EventTimeSessionWindows.withGap(10))
          .aggregate({ ...average, merge: undefined }),
      ),
    ).toThrow(/session windows needs merge\(a, b\)/);
    expect(() =>
      OperatorTestHarness.of<Sale, Sale>((input) =>
        input.keyBy((s) => s.shop).window(TumblingProcessingTimeWindows.of(10)).allowedLateness(5).sum('amount'),
      ),
    ).toThrow(/Allowed lateness applies to event-time windows only/);
  });
});

describe('a process window function’s state', () => {
  const firings = new ValueStateDescriptor<number>('firings');
  const windowsSeen = new ValueStateDescriptor<number>('seen');

  it('keeps window state across a window’s firings and drops it at its cleanup, while global state stays', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(TumblingEventTimeWindows.of(100))
        .allowedLateness(50)
        .process<string>((shop, context, _sales, out) => {
          const fired = context.windowState().getState(firings);
          fired.update((fired.value() ?? 0) + 1);
          const seen = context.globalState().getState(windowsSeen);
          if (fired.value() === 1) seen.update((seen.value() ?? 0) + 1);
          out.collect(`${shop} ${context.window.start} firing ${fired.value() ?? 0} of window ${seen.value() ?? 0}`);
        })
        .name('counted'),
    );
    harness.processElements([sale('a', 1, 10)]).processWatermark(100);
    harness.processElements([sale('a', 1, 20)]);
    expect(Object.keys(harness.stateOf('counted', 'window-state').get('"a"') as object)).toEqual(['0:100']);
    harness.processWatermark(150);
    expect(harness.stateOf('counted', 'window-state').size, 'dropped with the window at 99 + 50').toBe(0);
    harness.processElements([sale('a', 1, 120)]).processWatermark(300);
    expect(harness.outputValues()).toEqual(['a 0 firing 1 of window 1', 'a 0 firing 2 of window 1', 'a 100 firing 1 of window 2']);
    expect(harness.stateOf('counted', 'global-state').get('"a"')).toEqual({ 'counted/seen': 2 });
  });

  it('has no per-window state in merging windows, as Flink', () => {
    const harness = OperatorTestHarness.of<Sale, string>((input) =>
      input
        .keyBy((s) => s.shop)
        .window(EventTimeSessionWindows.withGap(10))
        .process<string>((_shop, context, _sales, out) => out.collect(String(context.windowState().getState(firings).value()))),
    );
    expect(() => harness.processElements([sale('a', 1, 10)]).processWatermark(100)).toThrow(
      'per-window state is not allowed when using merging windows (as in Flink); use globalState()',
    );
  });
});
