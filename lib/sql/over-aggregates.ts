import { MapStateDescriptor, ValueStateDescriptor } from '../api/state.js';
import { aggregateFunction, compileAggregate } from './aggregates.js';
import type { Expression, OverClause, Select } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { AGGREGATE_FUNCTIONS, canonical, compileExpression, resolveField, subexpressions } from './expressions.js';
import type { PlannedRelation } from './kafka-table.js';
import { appendOnly, changelogMode, columnList, expiring, groupKey, scopeOf, sqlOperator, type PlanContext } from './plan-context.js';

type Call = Extract<Expression, { kind: 'call' }>;

/** The aggregate calls with an OVER clause in an expression, outermost first. */
export function overCalls(expression: Expression | undefined, found: Call[] = []): Call[] {
  if (!expression) return found;
  if (expression.kind === 'call' && expression.over && AGGREGATE_FUNCTIONS.has(expression.name)) {
    found.push(expression);
    return found;
  }
  for (const inner of subexpressions(expression)) overCalls(inner, found);
  return found;
}

/** The frame as Flink writes it for `explain`. */
function frameText(over: OverClause): string {
  const frame = over.frame ?? { unit: 'RANGE', preceding: undefined };
  const start = frame.preceding === undefined ? 'UNBOUNDED' : `${frame.preceding}${frame.unit === 'RANGE' ? ' ms' : ''}`;
  return `${frame.unit} BETWEEN ${start} PRECEDING AND CURRENT ROW`;
}

/** What the OVER aggregation adds to each input row: the aggregates' values, and where a call's value stands in the widened row. */
export interface OverAggregated {
  readonly relation: PlannedRelation;
  /** Each OVER call's canonical text → its value's position in the relation's rows. */
  readonly results: ReadonlyMap<string, number>;
}

/**
 * Flink's event-time OVER aggregation: each row, once the watermark passes its time, with the
 * aggregates over its partition's rows up to it (ROWS: it and the n rows before it, in time and
 * then arrival order; RANGE: every row whose time is within the interval before its own, rows of
 * the same time sharing one result). A late row is dropped, as in Flink: with an unbounded frame,
 * one no later than the watermark; with a bounded one, no later than the partition's last
 * processed time. Insert-only; the rows keep their time attribute.
 */
export function planOverAggregate(select: Select, calls: readonly Call[], from: PlannedRelation, context: PlanContext, text: string): OverAggregated {
  const [first] = calls;
  const over = first?.over as OverClause;
  if (select.groupBy.length > 0) throw new SqlUnsupportedError('an OVER aggregation in a grouped query', over.position, text);
  for (const call of calls) {
    if (call.filter) throw new SqlError('FILTER does not apply to an OVER aggregation, in Flink either: filter the rows in WHERE or in a subquery', call.filter.position, text);
    if (JSON.stringify(canonicalOver(call.over as OverClause)) !== JSON.stringify(canonicalOver(over))) {
      throw new SqlError('every OVER aggregation of a SELECT must have the same window (PARTITION BY, ORDER BY and frame), as in Flink', call.position, text);
    }
  }
  const input = appendOnly(from, 'an OVER aggregation', over.position, text);
  const scope = scopeOf(input.fields, context, text);
  const [order, ...others] = over.orderBy;
  const time = order && !order.descending && order.expression.kind === 'column' ? resolveField(scope, order.expression.name, order.expression.table, order.expression.position) : undefined;
  if (others.length > 0 || time === undefined || time !== input.rowtime) {
    throw new SqlError("an OVER window in a stream is ordered by one time attribute, ascending (ORDER BY its rowtime column), as in Flink", over.position, text);
  }
  const frame = over.frame ?? { unit: 'RANGE' as const, preceding: undefined, position: over.position };
  const aggregates = calls.map((call) => compileAggregate(call, scope));
  const aggregate = aggregateFunction(aggregates);
  const fold = (rows: readonly Row[]) => aggregate.getResult(rows.reduce((accumulators, row) => aggregate.add(row, accumulators), aggregate.createAccumulator()));
  const partitions = over.partitionBy.map((expression) => compileExpression(expression, scope).evaluate);
  const { keyOf } = groupKey(partitions);
  const pending = expiring(new MapStateDescriptor<string, Row[]>('pending-rows'), context);
  const frameRows = expiring(new ValueStateDescriptor<Row[]>('frame-rows'), context);
  const accumulators = expiring(new ValueStateDescriptor<unknown[]>('accumulators'), context);
  const lastTime = expiring(new ValueStateDescriptor<number>('last-time'), context);
  const unbounded = frame.preceding === undefined;
  const stream = input.stream
    .keyBy((row) => (partitions.length === 0 ? '' : keyOf(row)))
    .withState((state) => ({ pending: state.getMapState(pending), frame: state.getState(frameRows), accumulators: state.getState(accumulators), last: state.getState(lastTime) }))
    .process<Row>({
      processElement(row, { state, timerService }) {
        const at = row[time] as number;
        // Late, as Flink judges it: an unbounded frame's row by the watermark, a bounded one's by the last time processed.
        if (at <= (unbounded ? timerService().currentWatermark() : (state.last.value() ?? 0))) return;
        const key = String(at);
        state.pending.put(key, [...(state.pending.get(key) ?? []), row]);
        timerService().registerEventTimeTimer(at);
      },
      onTimer(timestamp, { state }, out) {
        const key = String(timestamp);
        const rows = state.pending.get(key);
        if (!rows) return;
        state.pending.remove(key);
        state.last.update(timestamp);
        if (unbounded) {
          // The partition's accumulators carry every row before; RANGE gives rows of one time one result.
          let running = state.accumulators.value() ?? aggregate.createAccumulator();
          if (frame.unit === 'RANGE') {
            for (const row of rows) running = aggregate.add(row, running);
            const result = aggregate.getResult(running);
            for (const row of rows) out.collect([...row, ...result]);
          } else {
            for (const row of rows) {
              running = aggregate.add(row, running);
              out.collect([...row, ...aggregate.getResult(running)]);
            }
          }
          state.accumulators.update(running);
          return;
        }
        const preceding = frame.preceding;
        let kept = state.frame.value() ?? [];
        if (frame.unit === 'RANGE') {
          kept = [...kept.filter((row) => (row[time] as number) >= timestamp - preceding), ...rows];
          const result = fold(kept);
          for (const row of rows) out.collect([...row, ...result]);
        } else {
          for (const row of rows) {
            kept = [...kept, row].slice(-(preceding + 1));
            out.collect([...row, ...fold(kept)]);
          }
        }
        state.frame.update(kept);
      },
    });
  const fields: Field[] = [...input.fields, ...aggregates.map((a, i) => ({ name: `$over${i}`, type: a.type, hidden: true }))];
  const relation: PlannedRelation = { stream, fields, rowtime: input.rowtime };
  sqlOperator(
    stream,
    context,
    'over-aggregate',
    `OverAggregate(partitionBy=[${over.partitionBy.map((e) => (e.kind === 'column' ? e.name : 'an expression')).join(', ')}], orderBy=[${columnList([input.fields[time] as Field])}], window=[${frameText(over)}], select=[${columnList(fields.slice(0, input.fields.length))}, ${calls.map((c) => c.name).join(', ')}])`,
    changelogMode(relation),
  );
  const results = new Map(calls.map((call, i) => [canonical(call), input.fields.length + i]));
  return { relation, results };
}

/** An OVER clause without its positions, to compare two. */
function canonicalOver(over: OverClause): unknown {
  return JSON.parse(canonical({ kind: 'call', name: '', args: [], distinct: false, filter: undefined, star: false, over, position: over.position })) as unknown;
}
