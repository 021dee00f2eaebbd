import { MapStateDescriptor } from '../api/state.js';
import type { Expression, Query, SortItem } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError } from './errors.js';
import { compileExpression, resolveField, subexpressions } from './expressions.js';
import type { PlannedRelation } from './kafka-table.js';
import { appendOnly, expiring, scopeOf, sqlOperator, type PlanContext } from './plan-context.js';
import { rowOrder } from './ranking.js';

/**
 * ORDER BY on a stream, as Flink's temporal sort runs it: by the time attribute ascending first,
 * then by the other items. Rows wait until the watermark passes their time, then each time's rows
 * are emitted in the other items' order (rows equal in all of them in their arrival order), so
 * the result is insert-only and keeps its time attribute. A row whose time the watermark has
 * passed is late, and dropped. One sorter sees every row, as Flink sorts at parallelism 1.
 */
export function planSort(input: PlannedRelation, orderBy: readonly SortItem[], position: SortItem['expression']['position'], context: PlanContext, text: string): PlannedRelation {
  const rows = appendOnly(input, 'ORDER BY', position, text);
  const scope = scopeOf(rows.fields, context, text);
  const [first, ...rest] = orderBy;
  const byTime =
    first !== undefined &&
    !first.descending &&
    first.expression.kind === 'column' &&
    rows.rowtime !== undefined &&
    resolveField(scope, first.expression.name, first.expression.table, first.expression.position) === rows.rowtime;
  if (!byTime) {
    throw new SqlError('Sort on a non-time-attribute field is not supported: ORDER BY the time attribute, ascending, first, as in Flink', first?.expression.position ?? position, text);
  }
  const time = rows.rowtime;
  const others = rest.map(({ expression, descending }) => ({ compiled: compileExpression(expression, scope), descending }));
  const compare = rowOrder(others);
  const waiting = expiring(new MapStateDescriptor<string, Row[]>('rows-by-time'), context);
  const sorted = rows.stream
    .keyBy(() => '')
    .withState((state) => state.getMapState(waiting))
    .process<Row>({
      processElement(row, { state, timerService }) {
        const at = row[time] as number;
        if (at <= timerService().currentWatermark()) return;
        state.put(String(at), [...(state.get(String(at)) ?? []), row]);
        timerService().registerEventTimeTimer(at);
      },
      onTimer(timestamp, { state }, out) {
        const due = state.get(String(timestamp)) ?? [];
        for (const row of [...due].sort(compare)) out.collect(row);
        state.remove(String(timestamp));
      },
    });
  const timeColumn = (rows.fields[time] as Field).name;
  sqlOperator(sorted, context, 'sort', `TemporalSort(orderBy=[${timeColumn}${others.length > 0 ? `, and ${others.length} more` : ''}], state=[the rows the watermark has not passed])`, 'insert-only');
  return { ...rows, stream: sorted };
}

/** The columns an expression reads, by name. */
function columnNames(expression: Expression | undefined): string[] {
  if (!expression) return [];
  if (expression.kind === 'column') return [expression.name.toLowerCase()];
  return subexpressions(expression).flatMap(columnNames);
}

/**
 * A SELECT whose ORDER BY reads columns it does not select, as Flink allows: each such ORDER BY
 * item becomes an extra item of the SELECT (`$order<i>`), which ORDER BY sorts by and `extra`
 * counts, for the plan to drop after sorting. Undefined when ORDER BY reads only what the query
 * selects.
 */
export function withOrderColumns(query: Query, orderBy: readonly SortItem[]): { query: Query; orderBy: SortItem[]; extra: number } | undefined {
  if (query.kind !== 'select' || query.distinct || query.items.some(({ expression }) => expression.kind === 'star')) return undefined;
  const selected = new Set(query.items.map(({ expression, alias }) => (alias ?? (expression.kind === 'column' ? expression.name : '')).toLowerCase()));
  const unselected = orderBy.map(({ expression }) => columnNames(expression).some((name) => !selected.has(name)));
  if (!unselected.includes(true)) return undefined;
  const items = [...query.items];
  const sorted = orderBy.map((item, i) => {
    if (!unselected[i]) return item;
    const alias = `$order${i}`;
    items.push({ expression: item.expression, alias });
    return { ...item, expression: { kind: 'column' as const, table: undefined, name: alias, position: item.expression.position } };
  });
  return { query: { ...query, items }, orderBy: sorted, extra: items.length - query.items.length };
}
