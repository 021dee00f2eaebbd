// The shapes of the order-totals pipeline that fault schedules and the simulation run, with
// what each must write, computed by plain loops.
import { MapStateDescriptor, minutes, TumblingEventTimeWindows, type DataStream, type MapState } from '../../lib/api/index.js';
import { Schema, StreamTableEnvironment } from '../../lib/sql/index.js';
import { expectedTotals, type GeneratedOrder } from './orders.js';
import type { OrderTotalsOptions, Total } from './pipelines.js';

export type ScheduleKind = 'one-stage' | 'two-stage' | 'three-stage' | 'join' | 'broadcast' | 'broadcast-forward' | 'sql-upsert';

/** The three-stage kind's results: the sum of five minutes' top totals. */
const FIVE_MINUTE_TOPS = 'five-minute-tops';

/** The category whose totals the broadcast kind sends to every shard, as the reference of each minute. */
const REFERENCE_CATEGORY = 'category-0';
const REFERENCES = new MapStateDescriptor<number, number>('references');
/** The broadcast-forward kind's count of the references a shard has seen. */
const SEEN = new MapStateDescriptor<string, number>('seen');
/** The shards of a second stage (orderTotalsPipeline's parallelism): each writes what a broadcast element makes it write. */
const SECOND_STAGE_SHARDS = 2;

export const SCHEDULE_KINDS: Record<ScheduleKind, { window: number; rest: OrderTotalsOptions['rest'] }> = {
  'one-stage': { window: minutes(5), rest: (totals) => totals },
  'two-stage': {
    window: minutes(1),
    // A keyBy on a new key: a repartition topic and a second stage finding each minute's top category.
    rest: (totals) => totals.keyBy((total) => total.windowStart).window(TumblingEventTimeWindows.of(minutes(1))).maxBy('amount'),
  },
  'three-stage': {
    window: minutes(1),
    // Two keyBys after the first: each minute's top category (a second stage), then the sum of
    // the tops of every five minutes (a third), each stage watermarked by the one before it.
    rest: (totals) =>
      totals
        .keyBy((total) => total.windowStart)
        .window(TumblingEventTimeWindows.of(minutes(1)))
        .maxBy('amount')
        .keyBy(() => FIVE_MINUTE_TOPS)
        .window(TumblingEventTimeWindows.of(minutes(5)))
        .sum('amount')
        .map((sum, { timestamp }): Total => ({ category: FIVE_MINUTE_TOPS, windowStart: timestamp + 1 - minutes(5), amount: sum.amount })),
  },
  join: {
    window: minutes(1),
    // A window join of each minute's totals with themselves: both inputs through one repartition
    // topic to a second stage, which pairs every category with every category of the minute.
    rest: (totals) =>
      totals
        .join(totals)
        .where((total) => total.windowStart)
        .equalTo((total) => total.windowStart)
        .window(TumblingEventTimeWindows.of(minutes(1)))
        .apply((a, b) => joined(a, b)),
  },
  broadcast: {
    window: minutes(1),
    // Each minute's total of the reference category broadcast to every shard of a second stage,
    // where every other category's total of the minute is written less it, once the minute is over.
    rest: (totals) =>
      totals
        .filter((total) => total.category !== REFERENCE_CATEGORY)
        .keyBy((total) => total.category)
        .connect(totals.filter((total) => total.category === REFERENCE_CATEGORY).broadcast(REFERENCES))
        .process<Total, { totals: MapState<number, number> }>({
          open: (state) => ({ totals: state.getMapState(new MapStateDescriptor<number, number>('totals')) }),
          processElement(total, { state, timerService }) {
            state.totals.put(total.windowStart, total.amount);
            timerService().registerEventTimeTimer(total.windowStart + minutes(1));
          },
          processBroadcastElement(reference, { getBroadcastState }) {
            getBroadcastState(REFERENCES).put(reference.windowStart, reference.amount);
          },
          onTimer(timestamp, { state, getBroadcastState, getCurrentKey }, out) {
            const windowStart = timestamp - minutes(1);
            const amount = state.totals.get(windowStart) ?? 0;
            state.totals.remove(windowStart);
            out.collect({ category: getCurrentKey(), windowStart, amount: amount - (getBroadcastState(REFERENCES).get(windowStart) ?? 0) });
          },
        }),
  },
  'broadcast-forward': {
    window: minutes(1),
    // The same references broadcast to a non-keyed stream: the other totals pass through on the
    // shard of the partition they came from, and each shard numbers the references it has seen,
    // in its broadcast state, in the order of their minutes, as one first-stage shard wrote them.
    rest: (totals) =>
      totals
        .filter((total) => total.category !== REFERENCE_CATEGORY)
        .connect(totals.filter((total) => total.category === REFERENCE_CATEGORY).broadcast(SEEN))
        .process<Total>({
          processElement: (total, _context, out) => out.collect(total),
          processBroadcastElement(reference, { getBroadcastState }, out) {
            const seen = (getBroadcastState(SEEN).get('references') ?? 0) + 1;
            getBroadcastState(SEEN).put('references', seen);
            out.collect({ category: `reference-${seen}`, windowStart: reference.windowStart, amount: reference.amount });
          },
        }),
  },
  'sql-upsert': {
    window: minutes(1),
    // Flink SQL over the totals: each category's running sum, an updating GROUP BY in a stage of
    // its own, whose +I and +U changes are written as an upsert sink writes them (a -U not at all).
    rest: runningSums,
  },
};

const TOTALS_SCHEMA = Schema.newBuilder().column('category', 'STRING').column('windowStart', 'BIGINT').column('amount', 'BIGINT').build();

/** The sql-upsert kind's changes: a category's n-th window brings its running sum, as `category@n`. */
function runningSums(totals: DataStream<Total>): DataStream<Total> {
  const tableEnv = StreamTableEnvironment.create(totals.getExecutionEnvironment());
  tableEnv.createTemporaryView('totals', tableEnv.fromDataStream(totals, TOTALS_SCHEMA));
  const sums = tableEnv.sqlQuery('SELECT category, COUNT(*) AS windows, SUM(amount) AS amount FROM totals GROUP BY category');
  return tableEnv
    .toChangelogStream(sums)
    .filter((change) => change.kind !== '-U')
    .map(({ fields }): Total => ({ category: String(fields.category), windowStart: Number(fields.windows), amount: Number(fields.amount) }));
}

/** A pair of a minute's totals, as the join kind writes it. */
function joined(a: Total, b: Total): Total {
  return { category: `${a.category}&${b.category}`, windowStart: a.windowStart, amount: a.amount - b.amount };
}

/**
 * What the pipeline must write, by `category@windowStart` (one-stage, broadcast, and
 * broadcast-forward with `reference-n@windowStart`), `@windowStart` (two-stage),
 * `a&b@windowStart` (join), `five-minute-tops@windowStart` (three-stage) or `category@n`, the
 * running sum of its first n windows (sql-upsert).
 */
export function expectedOutput(kind: ScheduleKind, orders: readonly GeneratedOrder[]): Map<string, number> {
  const totals = expectedTotals(orders, SCHEDULE_KINDS[kind].window);
  if (kind === 'one-stage') return totals;
  if (kind === 'sql-upsert') {
    const sums = new Map<string, number>();
    const byCategory = new Map<string, { windowStart: number; amount: number }[]>();
    for (const [key, amount] of totals) {
      const [category = '', windowStart] = key.split('@');
      byCategory.set(category, [...(byCategory.get(category) ?? []), { windowStart: Number(windowStart), amount }]);
    }
    for (const [category, windows] of byCategory) {
      let sum = 0;
      windows.sort((a, b) => a.windowStart - b.windowStart).forEach(({ amount }, n) => sums.set(`${category}@${n + 1}`, (sum += amount)));
    }
    return sums;
  }
  if (kind === 'broadcast-forward') {
    const output = new Map([...totals].filter(([key]) => !key.startsWith(`${REFERENCE_CATEGORY}@`)));
    const references = [...totals].flatMap(([key, amount]) => (key.startsWith(`${REFERENCE_CATEGORY}@`) ? [{ minute: Number(key.split('@')[1]), amount }] : []));
    references.sort((a, b) => a.minute - b.minute);
    for (const [index, { minute, amount }] of references.entries()) output.set(`reference-${index + 1}@${minute}`, amount);
    return output;
  }
  if (kind === 'broadcast') {
    const lessReference = new Map<string, number>();
    for (const [key, amount] of totals) {
      const [category, minute] = key.split('@');
      if (category !== REFERENCE_CATEGORY) lessReference.set(key, amount - (totals.get(`${REFERENCE_CATEGORY}@${minute ?? ''}`) ?? 0));
    }
    return lessReference;
  }
  if (kind === 'join') {
    const pairs = new Map<string, number>();
    for (const [keyA, amountA] of totals) {
      for (const [keyB, amountB] of totals) {
        const [categoryA, minute] = keyA.split('@');
        const [categoryB, minuteB] = keyB.split('@');
        if (minute === minuteB) pairs.set(`${categoryA ?? ''}&${categoryB ?? ''}@${minute ?? ''}`, amountA - amountB);
      }
    }
    return pairs;
  }
  const top = new Map<string, number>();
  for (const [key, amount] of totals) {
    const minute = `@${key.split('@')[1] ?? ''}`;
    top.set(minute, Math.max(top.get(minute) ?? 0, amount));
  }
  if (kind === 'two-stage') return top;
  const fiveMinutes = new Map<string, number>();
  for (const [minute, amount] of top) {
    const start = Math.floor(Number(minute.slice(1)) / minutes(5)) * minutes(5);
    const key = `${FIVE_MINUTE_TOPS}@${start}`;
    fiveMinutes.set(key, (fiveMinutes.get(key) ?? 0) + amount);
  }
  return fiveMinutes;
}

/** What identifies one result: a category's window (or a pair's), or (two stages) a minute's top. */
export function resultKey(kind: ScheduleKind, total: Total): string {
  return kind === 'two-stage' ? `@${total.windowStart}` : `${total.category}@${total.windowStart}`;
}

/** How many times a result is written: what a broadcast element makes a shard write, every shard writes. */
function copiesOf(kind: ScheduleKind, key: string): number {
  return kind === 'broadcast-forward' && key.startsWith('reference-') ? SECOND_STAGE_SHARDS : 1;
}

/** Every difference between what was written and what was expected: each result exactly once (or once per shard), with its amount. */
export function compareOutput(kind: ScheduleKind, written: readonly Total[], expected: Map<string, number>): string[] {
  const problems: string[] = [];
  const actual = new Map<string, number>();
  const times = new Map<string, number>();
  for (const total of written) {
    const key = resultKey(kind, total);
    times.set(key, (times.get(key) ?? 0) + 1);
    if (times.get(key) === copiesOf(kind, key) + 1) problems.push(`${key} written twice`);
    if (actual.has(key) && actual.get(key) !== total.amount) problems.push(`${key} written as ${actual.get(key)} and as ${total.amount}`);
    actual.set(key, total.amount);
  }
  for (const [key, count] of times) if (count < copiesOf(kind, key)) problems.push(`${key} written by ${count} of ${copiesOf(kind, key)} shards`);
  for (const [key, amount] of expected) {
    if (!actual.has(key)) problems.push(`${key} missing (expected ${amount})`);
    else if (actual.get(key) !== amount) problems.push(`${key} is ${actual.get(key)}, expected ${amount}`);
  }
  for (const key of actual.keys()) if (!expected.has(key)) problems.push(`${key} not expected`);
  return problems;
}
