import { MapStateDescriptor, ValueStateDescriptor, type MapState, type ValueState } from '../api/state.js';
import type { Collector } from '../api/functions.js';
import type { Expression } from './ast.js';
import type { Compiled, Field, Row } from './compiled.js';
import { SqlUnsupportedError, type SqlPosition } from './errors.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import type { SqlValue } from './types.js';

/** What a join's conditions say of the right input's time minus the left one's, in ms: at least `lower`, at most `upper`. */
export interface TimeInterval {
  readonly lower: number;
  readonly upper: number;
}

/** Where a column stands in the joined row. */
type ColumnPosition = (column: Extract<Expression, { kind: 'column' }>) => number;

/** A time attribute plus or minus constant intervals: `ts`, `ts + INTERVAL '1' HOUR`, `ts - INTERVAL '5' MINUTE + INTERVAL '1' SECOND`. */
function shiftedTime(expression: Expression, time: number, resolve: ColumnPosition): number | undefined {
  if (expression.kind === 'column') return resolve(expression) === time ? 0 : undefined;
  if (expression.kind !== 'binary' || (expression.operator !== '+' && expression.operator !== '-')) return undefined;
  const sign = expression.operator === '+' ? 1 : -1;
  if (expression.right.kind === 'interval') {
    const base = shiftedTime(expression.left, time, resolve);
    return base === undefined ? undefined : base + sign * expression.right.millis;
  }
  if (expression.left.kind === 'interval' && sign === 1) {
    const base = shiftedTime(expression.right, time, resolve);
    return base === undefined ? undefined : base + expression.left.millis;
  }
  return undefined;
}

type Bound = { readonly lower: number } | { readonly upper: number };

/**
 * The bounds a comparison puts on right − left, a TIMESTAMP(3)'s strict comparison a millisecond
 * inside its limit, as Flink's planner takes them; nothing when it compares anything else.
 */
function comparisonBounds(a: Expression, operator: string, b: Expression, times: { readonly left: number; readonly right: number; readonly resolve: ColumnPosition }): Bound[] {
  const { left, right, resolve } = times;
  const strict = operator === '<' || operator === '>' ? 1 : 0;
  const aLeft = shiftedTime(a, left, resolve);
  const bRight = shiftedTime(b, right, resolve);
  if (aLeft !== undefined && bRight !== undefined) {
    // left + p OP right + q: right − left OP' p − q.
    const limit = aLeft - bRight;
    return operator === '>' || operator === '>=' ? [{ upper: limit - strict }] : [{ lower: limit + strict }];
  }
  const aRight = shiftedTime(a, right, resolve);
  const bLeft = shiftedTime(b, left, resolve);
  if (aRight !== undefined && bLeft !== undefined) {
    // right + p OP left + q: right − left OP q − p.
    const limit = bLeft - aRight;
    return operator === '>' || operator === '>=' ? [{ lower: limit + strict }] : [{ upper: limit - strict }];
  }
  return [];
}

/**
 * The interval a join's conditions bound the inputs' time attributes to, when they bound it on
 * both sides (Flink's interval join); undefined when they do not, and the join is a regular one.
 */
export function timeInterval(conditions: readonly Expression[], times: { readonly left: number; readonly right: number }, resolve: ColumnPosition): TimeInterval | undefined {
  const context = { ...times, resolve };
  const bounds = conditions.flatMap((condition): Bound[] => {
    if (condition.kind === 'binary' && ['<', '<=', '>', '>='].includes(condition.operator)) return comparisonBounds(condition.left, condition.operator, condition.right, context);
    if (condition.kind === 'between' && !condition.negated) {
      return [...comparisonBounds(condition.operand, '>=', condition.low, context), ...comparisonBounds(condition.operand, '<=', condition.high, context)];
    }
    return [];
  });
  const lowers = bounds.flatMap((bound) => ('lower' in bound ? [bound.lower] : []));
  const uppers = bounds.flatMap((bound) => ('upper' in bound ? [bound.upper] : []));
  if (lowers.length === 0 || uppers.length === 0) return undefined;
  return { lower: Math.max(...lowers), upper: Math.min(...uppers) };
}

/** What an interval join needs of the regular join's planning: each input's key, time and width, the pair's condition. */
export interface IntervalJoinParts {
  readonly inputs: readonly [PlannedRelation, PlannedRelation];
  readonly keyOf: readonly [(row: Row) => SqlValue, (row: Row) => SqlValue];
  /** Whether a row's join key holds a NULL, which SQL's equality never matches. */
  readonly nullKey: readonly [(row: Row) => boolean, (row: Row) => boolean];
  readonly times: readonly [number, number];
  readonly interval: TimeInterval;
  /** Every condition of ON (or WHERE) that is not an equality of keys, the time bounds included. */
  readonly matches: Compiled | undefined;
  /** Whether each input is an outer one: its rows that never found a partner are emitted padded with NULLs as they expire. */
  readonly outer: readonly [boolean, boolean];
  readonly joinType: string;
  readonly fields: readonly Field[];
  readonly equalities: string;
  readonly position: SqlPosition;
}

/**
 * One input's kept rows of a key, by their time (as a string: a map state's key). An outer
 * input's rows carry one more value after their columns: whether they have found a partner.
 */
type RowsByTime = MapState<string, Row[]>;

interface IntervalJoinState {
  readonly rows: readonly [RowsByTime, RowsByTime];
  /** The time of each input's cleanup timer, if one is set. */
  readonly cleanup: readonly [ValueState<number>, ValueState<number>];
}

/**
 * Flink's event-time interval join (a join whose conditions bound right − left from both
 * sides): each row is joined with the other input's rows of its key whose times fall in its
 * interval as it arrives, and kept while the watermark could still bring it a partner; then a
 * cleanup timer drops it. Insert-only: an outer input's row that never found a partner is
 * emitted padded with NULLs when it is dropped, or at once when it comes too late to be kept. A
 * row that comes after the watermark passed its interval is joined with the rows still kept and
 * not kept itself, as in Flink.
 */
export function planIntervalJoin(parts: IntervalJoinParts, context: PlanContext, text: string): PlannedRelation {
  const { inputs, keyOf, nullKey, times, interval, matches, outer, fields } = parts;
  for (const input of inputs) {
    if (input.updating) throw new SqlUnsupportedError(`an interval join over an updating result (of ${input.updating.producer})`, parts.position, text);
  }
  // How far each input's rows reach into the other's time: a left row at t pairs with right rows
  // in [t + lower, t + upper], a right row at r with left rows in [r − upper, r − lower].
  const reach = [interval.upper, -interval.lower] as const;
  const widths = [inputs[0].fields.length, inputs[1].fields.length] as const;
  const columns = (side: 0 | 1, kept: Row) => (outer[side] ? kept.slice(0, widths[side]) : kept);
  const padded = (side: 0 | 1, row: Row) => (side === 0 ? [...row, ...inputs[1].fields.map(() => null)] : [...inputs[0].fields.map(() => null), ...row]);
  /** Drops a side's kept rows of a time, emitting an outer input's rows that never found a partner. */
  const drop = (side: 0 | 1, rows: RowsByTime, time: string, out: Collector<Row>) => {
    if (outer[side]) {
      for (const kept of rows.get(time) ?? []) {
        if (kept[widths[side]] === false) out.collect(padded(side, columns(side, kept)));
      }
    }
    rows.remove(time);
  };
  const rowsDescriptor = (name: string) => expiring(new MapStateDescriptor<string, Row[]>(name), context);
  const joined = sidedUnion(inputs[0].stream, inputs[1].stream)
    .keyBy(({ side, row }) => keyOf[side](row))
    .withState(
      (state): IntervalJoinState => ({
        rows: [state.getMapState(rowsDescriptor(outer[0] ? 'left-outer-rows' : 'left-rows')), state.getMapState(rowsDescriptor(outer[1] ? 'right-outer-rows' : 'right-rows'))],
        cleanup: [state.getState(new ValueStateDescriptor<number>('left-cleanup')), state.getState(new ValueStateDescriptor<number>('right-cleanup'))],
      }),
    )
    .process<Row>({
      processElement({ side, row }, { state, timerService }, out) {
        if (nullKey[side](row)) {
          if (outer[side]) out.collect(padded(side, row));
          return;
        }
        const watermark = Math.max(0, timerService().currentWatermark());
        const other = side === 0 ? 1 : 0;
        const at = row[times[side]] as number;
        const [from, to] = side === 0 ? [at + interval.lower, at + interval.upper] : [at - interval.upper, at - interval.lower];
        let partnered = false;
        // The other input's rows at or before this time can find no partner any more.
        const expired = watermark - reach[other] - 1;
        if (expired < to) {
          for (const [time, kept] of state.rows[other].entries()) {
            const theirs = Number(time);
            if (theirs >= from && theirs <= to) {
              let marked = false;
              for (const partner of kept) {
                const pair = side === 0 ? [...row, ...columns(other, partner)] : [...columns(other, partner), ...row];
                if (matches && matches.evaluate(pair) !== true) continue;
                out.collect(pair);
                partnered = true;
                if (outer[other] && partner[widths[other]] === false) {
                  partner[widths[other]] = true;
                  marked = true;
                }
              }
              if (marked) state.rows[other].put(time, kept);
            }
            if (theirs <= expired) drop(other, state.rows[other], time, out);
          }
        }
        if (watermark >= to) {
          if (outer[side] && !partnered) out.collect(padded(side, row));
          return;
        }
        const key = String(at);
        state.rows[side].put(key, [...(state.rows[side].get(key) ?? []), outer[side] ? [...row, partnered] : row]);
        if (state.cleanup[side].value() === undefined) scheduleCleanup(state.cleanup[side], at + reach[side] + 1, (time) => timerService().registerEventTimeTimer(time));
      },
      onTimer(timestamp, { state, timerService }, out) {
        const watermark = Math.max(0, timerService().currentWatermark());
        for (const side of [0, 1] as const) {
          if (state.cleanup[side].value() !== timestamp) continue;
          const expired = watermark - reach[side] - 1;
          let earliest: number | undefined;
          for (const [time] of state.rows[side].entries()) {
            const at = Number(time);
            if (at <= expired) drop(side, state.rows[side], time, out);
            else earliest = Math.min(earliest ?? at, at);
          }
          state.cleanup[side].clear();
          if (earliest !== undefined) scheduleCleanup(state.cleanup[side], earliest + reach[side] + 1, (time) => timerService().registerEventTimeTimer(time));
        }
      },
    });
  const relation: PlannedRelation = { stream: joined, fields, rowtime: undefined };
  sqlOperator(
    joined,
    context,
    'interval-join',
    `IntervalJoin(joinType=[${parts.joinType}], where=[${parts.equalities}], interval=[right − left in [${interval.lower}, ${interval.upper}] ms], select=[${columnList(fields)}], state=[each input's rows by join key and time, until the watermark passes their interval])`,
    changelogMode(relation),
  );
  return relation;
}

function scheduleCleanup(cleanup: ValueState<number>, at: number, register: (time: number) => void): void {
  cleanup.update(at);
  register(at);
}
