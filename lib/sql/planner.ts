import type { DataStream } from '../api/datastream.js';
import { ValueStateDescriptor } from '../api/state.js';
import { cumulatingEventTimeWindows, EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows, type WindowAssigner } from '../api/windows.js';
import { aggregateFunction, compileAggregate, type AggregateCall } from './aggregates.js';
import type { Expression, Query, Relation, Select } from './ast.js';
import { withWindowTableFunction } from './group-windows.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { emittedAtWindowEnd, windowStillOpen, type Compiled, type Field, type Row, type Scope, type WindowBound, type WindowColumn } from './compiled.js';
import { AGGREGATE_FUNCTIONS, canonical, compileBoolean, compileExpression, conjunction, conjuncts, resolveField, subexpressions, windowColumnOf } from './expressions.js';
import { normalizedChangelog } from './changelog-normalize.js';
import { planLimit } from './limit.js';
import { planSubqueryJoin, subqueryCondition } from './semi-joins.js';
import { planSetOperation } from './set-operations.js';
import { planSort, withOrderColumns } from './sort.js';
import { planRegularJoin } from './joins.js';
import { planUsingJoin } from './using-joins.js';
import { overCalls, planOverAggregate } from './over-aggregates.js';
import { planRank, planRetractableRank, planWindowRank, RANK_COLUMN, rankingOf, type Ranking } from './ranking.js';
import { kafkaSource, type PlannedRelation } from './kafka-table.js';
import { appendOnly, changelogMode, columnList, expiring, filtered, groupKey, scopeOf, sqlOperator, type CatalogTable, type PlanContext } from './plan-context.js';
import { plainTime, typeName, widensTo } from './types.js';
import { widen } from './values.js';

export type { CatalogTable, PlanContext } from './plan-context.js';

/** A window TVF not yet applied: aggregated over, it becomes a window operator; selected from, a window assignment. */
interface WindowedRelation {
  readonly kind: 'windowed';
  readonly input: PlannedRelation;
  readonly relation: Extract<Relation, { kind: 'window' }>;
  readonly fields: readonly Field[];
}

const WINDOW_COLUMNS = ['window_start', 'window_end', 'window_time'] as const;

function qualified(relation: PlannedRelation, qualifier: string): PlannedRelation {
  return { ...relation, fields: relation.fields.map((f) => ({ ...f, qualifier })) };
}

export function lookupTable(context: PlanContext, name: string, text: string, position: Relation['position']): CatalogTable {
  const table = context.tables.get(name.toLowerCase());
  if (!table) throw new SqlError(`object '${name}' not found: create it with CREATE TABLE or CREATE VIEW first`, position, text);
  return table;
}

function planTable(context: PlanContext, name: string, text: string, position: Relation['position']): PlannedRelation {
  const table = lookupTable(context, name, text, position);
  if (table.kind === 'stream') return table.relation;
  if (table.kind === 'view') return planQuery(table.query, context, table.text);
  const key = table.name.toLowerCase();
  let relation = context.sources.get(key);
  if (!relation) {
    const read = kafkaSource(table, context.env, context.session);
    relation = read.updating ? normalizedChangelog(read, context) : read;
    context.sources.set(key, relation);
  }
  return relation;
}

/** Plans FROM's relation; `where` is the query's WHERE, which joins a comma or CROSS JOIN. */
function planRelation(relation: Relation, context: PlanContext, text: string, where?: Expression): PlannedRelation | WindowedRelation {
  switch (relation.kind) {
    case 'join': {
      const left = materialized(planRelation(relation.left, context, text, where), context, text);
      const right = materialized(planRelation(relation.right, context, text, where), context, text);
      return relation.using ? planUsingJoin(relation, { left, right }, where, context, text) : planRegularJoin(relation, { left, right }, where, context, text);
    }
    case 'table':
      return qualified(planTable(context, relation.name, text, relation.position), relation.alias ?? relation.name);
    case 'subquery': {
      const planned = planQuery(relation.query, context, text);
      return relation.alias ? qualified(planned, relation.alias) : planned;
    }
    default:
      return windowed(relation, context, text);
  }
}

function windowed(relation: Extract<Relation, { kind: 'window' }>, context: PlanContext, text: string): WindowedRelation {
  const input = appendOnly(planRelation(relation.input, context, text) as PlannedRelation, 'a window function', relation.position, text);
  const scope = scopeOf(input.fields, context, text);
  const time = resolveField(scope, relation.timeColumn, undefined, relation.position);
  if (time !== input.rowtime) {
    throw new SqlError(
      `the window function's time column '${relation.timeColumn}' is not a time attribute: declare WATERMARK FOR ${relation.timeColumn} in its table`,
      relation.position,
      text,
    );
  }
  const timeType = (input.fields[time] as Field).type;
  const boundary = { ...timeType, rowtime: false, nullable: false, precision: 3 } as Field['type'];
  const windows = Symbol(relation.function);
  const windowFields: Field[] = [
    { name: 'window_start', type: boundary, window: { bound: 'start', of: windows, rowsMayBeLate: true } as const },
    { name: 'window_end', type: boundary, window: { bound: 'end', of: windows, rowsMayBeLate: true } as const },
    { name: 'window_time', type: { ...boundary, rowtime: true } as Field['type'] },
  ].map((f) => ({ ...f, qualifier: relation.alias }));
  const alias = relation.alias;
  return { kind: 'windowed', input, relation, fields: [...input.fields.map((f) => ({ ...f, qualifier: alias ?? f.qualifier })), ...windowFields] };
}

/** The window function as a window assigner, with Flink's checks of its intervals. */
function assignerOf(relation: Extract<Relation, { kind: 'window' }>, text: string): WindowAssigner {
  const [first = 0, second = 0, third = 0] = relation.intervals;
  const multiple = (size: number, unit: number, what: string) => {
    if (unit <= 0 || size % unit !== 0) throw new SqlError(`${relation.function} needs a size that is a whole multiple of its ${what}`, relation.position, text);
  };
  try {
    switch (relation.function) {
      case 'TUMBLE':
        return TumblingEventTimeWindows.of(first, second);
      case 'HOP':
        multiple(second, first, 'slide');
        return SlidingEventTimeWindows.of(second, first, third);
      case 'CUMULATE':
        multiple(second, first, 'step');
        return cumulatingEventTimeWindows(second, first, third);
      default:
        return EventTimeSessionWindows.withGap(first);
    }
  } catch (error) {
    if (error instanceof SqlError) throw error;
    throw new SqlError((error as Error).message, relation.position, text);
  }
}

/** The window function as rows: each input row once per window it falls in, with the window's columns after its own. */
function assignWindows(windowedRelation: WindowedRelation, context: PlanContext, text: string): PlannedRelation {
  const { input, relation } = windowedRelation;
  if (relation.function === 'SESSION') throw new SqlUnsupportedError('the SESSION window function outside a window aggregation', relation.position, text);
  const assigner = assignerOf(relation, text);
  const time = input.rowtime as number;
  const assigned = input.stream.flatMap((row) =>
    assigner
      .assignWindows(row[time] as number)
      .sort((a, b) => a.start - b.start || a.end - b.end)
      .map(({ start, end }): Row => [...row, start, end, end - 1]),
  );
  const stream = sqlOperator(assigned, context, 'window-table-function', `WindowTableFunction(${relation.function}: ${assigner.describe()})`, 'insert-only');
  return { stream, fields: windowedRelation.fields, rowtime: windowedRelation.fields.length - 1 };
}

/** The relation without its last `count` columns (an updating row's kind, after them, kept). */
function withoutLastColumns(relation: PlannedRelation, count: number): PlannedRelation {
  const width = relation.fields.length - count;
  const stream = relation.stream.map((row) => (relation.updating ? [...row.slice(0, width), row[width + count] ?? null] : row.slice(0, width)));
  const rowtime = relation.rowtime !== undefined && relation.rowtime < width ? relation.rowtime : undefined;
  return { ...relation, stream, fields: relation.fields.slice(0, width), rowtime };
}

function isWindowed(relation: PlannedRelation | WindowedRelation): relation is WindowedRelation {
  return 'relation' in relation;
}

function materialized(from: PlannedRelation | WindowedRelation, context: PlanContext, text: string): PlannedRelation {
  return isWindowed(from) ? assignWindows(from, context, text) : from;
}

/** Plans a query into a stream of rows. */
export function planQuery(query: Query, context: PlanContext, text: string): PlannedRelation {
  if (query.kind === 'setOperation') return planSetOperation(query, query.inputs.map((input) => planQuery(input, context, text)), context, text);
  if (query.kind === 'sorted') {
    // ORDER BY columns the query does not select are selected for the sort, then dropped.
    const widened = withOrderColumns(query.query, query.orderBy);
    const input = planQuery(widened?.query ?? query.query, context, text);
    const orderBy = widened?.orderBy ?? query.orderBy;
    const sorted = query.limit === undefined ? planSort(input, orderBy, query.position, context, text) : planLimit(input, orderBy, { limit: query.limit, offset: query.offset }, query.position, context, text);
    return widened ? withoutLastColumns(sorted, widened.extra) : sorted;
  }
  return planSelect(query, context, text);
}

/** The aggregate calls in an expression, outermost only, each once. */
function aggregateCalls(expression: Expression | undefined, found: Extract<Expression, { kind: 'call' }>[] = []): Extract<Expression, { kind: 'call' }>[] {
  if (!expression) return found;
  if (expression.kind === 'call' && AGGREGATE_FUNCTIONS.has(expression.name) && !expression.over) {
    if (!found.some((call) => canonical(call) === canonical(expression))) found.push(expression);
    return found;
  }
  for (const child of subexpressions(expression)) aggregateCalls(child, found);
  return found;
}

/** The output columns' names made unique as Flink makes them: a second `k` is `k0`, a third `k1`. */
function uniqueNames<T extends { readonly name: string }>(items: readonly T[]): T[] {
  const taken = new Set<string>();
  return items.map((item) => {
    let name = item.name;
    for (let n = 0; taken.has(name.toLowerCase()); n++) name = `${item.name}${n}`;
    taken.add(name.toLowerCase());
    return { ...item, name };
  });
}

/** The SELECT list with * expanded, each item with its output name: its alias, its column's name, or EXPR$n as Flink names it. */
function selectItems(select: Select, fields: readonly Field[], text: string): { expression: Expression; name: string }[] {
  return select.items.flatMap((item, index) => {
    const { expression } = item;
    if (expression.kind === 'star') {
      const chosen = fields.filter((f) => !f.hidden && (expression.table === undefined ? !f.qualifiedOnly : f.qualifier?.toLowerCase() === expression.table.toLowerCase()));
      if (chosen.length === 0) throw new SqlError(`no table named '${expression.table ?? ''}' in FROM`, expression.position, text);
      return chosen.map((f): { expression: Expression; name: string } => ({ expression: { kind: 'column', table: f.qualifier, name: f.name, position: expression.position }, name: f.name }));
    }
    return [{ expression, name: item.alias ?? (expression.kind === 'column' ? expression.name : `EXPR$${index}`) }];
  });
}

function planSelect(written: Select, context: PlanContext, text: string): PlannedRelation {
  if (written.distinct) return planDistinct(planSelect({ ...written, distinct: false }, context, text), written, context, text);
  const windowed = withWindowTableFunction(written, text);
  const ranking = rankingOf(windowed, text);
  const ranked = ranking ? { ...windowed, where: ranking.where } : windowed;
  // IN (subquery) conditions are semi joins of FROM's rows, before the rest of WHERE.
  const semi = conjuncts(ranked.where).flatMap((condition) => subqueryCondition(condition) ?? []);
  const select = semi.length === 0 ? ranked : { ...ranked, where: conjunction(conjuncts(ranked.where).filter((condition) => !subqueryCondition(condition))) };
  const related = ranking ? planTopN(ranking, select.from.alias, context, text) : planRelation(select.from, context, text, select.where);
  const from = semi.reduce<PlannedRelation | WindowedRelation>(
    (relation, { lookup, join }) => planSubqueryJoin(materialized(relation, context, text), lookup, join, planQuery(lookup.query, context, text), context, text),
    related,
  );
  const calls = [...select.items.flatMap((item) => aggregateCalls(item.expression)), ...aggregateCalls(select.having)];
  const grouped = select.groupBy.length > 0 || calls.length > 0;
  const overs = select.items.flatMap((item) => overCalls(item.expression));
  if (overs.length > 0 && grouped) throw new SqlUnsupportedError('an OVER aggregation in a grouped query', overs[0]?.position, text);
  if (grouped) {
    if (isWindowed(from)) return planWindowAggregate(select, from, calls, context, text);
    return planGroupAggregate(select, from, calls, context, text);
  }
  if (select.having) throw new SqlError('HAVING needs GROUP BY or an aggregate', select.having.position, text);
  const input = materialized(from, context, text);
  if (overs.length === 0) return project(select, input, context, text);
  // WHERE filters the rows before the OVER aggregation sees them, as SQL orders the clauses.
  const condition = select.where && compileBoolean(select.where, scopeOf(input.fields, context, text), 'WHERE');
  const { relation, results } = planOverAggregate(select, overs, { ...input, stream: filtered(input, condition, context) }, context, text);
  return project({ ...select, where: undefined }, relation, context, text, results);
}

/**
 * A subquery that selects ROW_NUMBER() OVER (…), under a WHERE that keeps its first N ranks: its
 * FROM and WHERE, ranked, then its SELECT list with the rank in ROW_NUMBER()'s place.
 */
function planTopN(ranking: Ranking, alias: string | undefined, context: PlanContext, text: string): PlannedRelation {
  const { inner } = ranking;
  if (inner.groupBy.length > 0 || inner.items.some((item) => aggregateCalls(item.expression).length > 0)) {
    throw new SqlUnsupportedError('a Top-N over an aggregation (an updating input)', ranking.over.position, text);
  }
  const from = planRelation(inner.from, context, text, inner.where);
  const input = materialized(from, context, text);
  const scope = scopeOf(input.fields, context, text);
  const condition = inner.where && compileBoolean(inner.where, scope, 'WHERE');
  const rows = { ...input, stream: filtered(input, condition, context) };
  const windowEnd = windowEndOf(ranking.over.partitionBy, scope);
  const ranked = input.updating
    ? planRetractableRank(rows, ranking, context, text)
    : windowEnd === undefined
      ? planRank(rows, ranking, context, text)
      : planWindowRank(rows, ranking, windowEnd, context, text);
  const rank: Expression = { kind: 'column', table: undefined, name: RANK_COLUMN, position: ranking.over.position };
  const items = inner.items.map((item, i) => (i === ranking.rankItem ? { expression: rank, alias: item.alias ?? `EXPR$${i}` } : item));
  const projected = project({ ...inner, items, where: undefined }, ranked, context, text);
  return alias ? qualified(projected, alias) : projected;
}

function project(select: Select, input: PlannedRelation, context: PlanContext, text: string, overResults?: ReadonlyMap<string, number>): PlannedRelation {
  const scope = { ...scopeOf(input.fields, context, text), ...(overResults ? { overResults } : {}) };
  const condition = select.where && compileBoolean(select.where, scope, 'WHERE');
  const items = selectItems(select, input.fields, text).map(({ expression, name }) => ({ name, compiled: compileExpression(expression, scope), expression }));
  const rowtime = items.findIndex(({ expression }) => expression.kind === 'column' && resolveField(scope, expression.name, expression.table, expression.position) === input.rowtime);
  const evaluators = items.map((item) => item.compiled.evaluate);
  const rows = filtered(input, condition, context);
  const identity = items.length === input.fields.length && items.every(({ expression }, i) => expression.kind === 'column' && resolveField(scope, expression.name, expression.table, expression.position) === i);
  const width = input.fields.length;
  const project = input.updating ? (row: Row) => [...evaluators.map((evaluate) => evaluate(row)), row[width] ?? null] : (row: Row) => evaluators.map((evaluate) => evaluate(row));
  const stream = identity ? rows : sqlOperator(rows.map(project), context, 'select', `Calc(select=[${items.map((i) => i.name).join(', ')}])`, changelogMode(input));
  const positions = items.map(({ expression }) => (expression.kind === 'column' ? resolveField(scope, expression.name, expression.table, expression.position) : -1));
  const fields = uniqueNames(items).map((item, i) =>
    withWindow({ name: item.name, type: i === rowtime ? item.compiled.type : plainTime(item.compiled.type) }, input.fields[positions[i] ?? -1]?.window),
  );
  return { stream, fields, rowtime: rowtime < 0 ? undefined : rowtime, ...(input.updating ? { updating: keptKeys(filteredUpdates(input.updating, condition), positions) } : {}) };
}

/** A changelog's updates after a filter, which may keep a -U and drop the +U after it. */
function filteredUpdates(updating: NonNullable<PlannedRelation['updating']>, condition: Compiled | undefined): NonNullable<PlannedRelation['updating']> {
  return condition ? { ...updating, unpaired: true } : updating;
}

function planWindowAggregate(select: Select, from: WindowedRelation, calls: Extract<Expression, { kind: 'call' }>[], context: PlanContext, text: string): PlannedRelation {
  const { input, relation } = from;
  const inputScope = scopeOf(input.fields.map((f) => ({ ...f, qualifier: relation.alias ?? f.qualifier })), context, text);
  const windowScope = scopeOf(from.fields, context, text);
  const windowIndex = (expression: Expression) =>
    expression.kind === 'column' && WINDOW_COLUMNS.includes(expression.name.toLowerCase() as (typeof WINDOW_COLUMNS)[number])
      ? resolveField(windowScope, expression.name, expression.table, expression.position) - input.fields.length
      : -1;
  const windowKeys = select.groupBy.filter((e) => windowIndex(e) >= 0);
  if (!windowKeys.some((e) => windowIndex(e) === 0) || !windowKeys.some((e) => windowIndex(e) === 1)) {
    throw new SqlError('a window aggregation groups by window_start and window_end', select.position, text);
  }
  const keys = select.groupBy.filter((e) => windowIndex(e) < 0).map((expression) => ({ expression, compiled: compileExpression(expression, inputScope) }));
  const aggregates: AggregateCall[] = calls.map((call) => compileAggregate(call, inputScope));
  const condition = select.where && compileBoolean(select.where, inputScope, 'WHERE');
  // The aggregated row: the window's columns, then the keys, then the aggregates' results.
  const windows = Symbol(relation.function);
  const bounds: readonly (WindowBound | undefined)[] = [
    { bound: 'start', of: windows, rowsMayBeLate: false },
    { bound: 'end', of: windows, rowsMayBeLate: false },
  ];
  const fields: Field[] = [
    ...from.fields.slice(input.fields.length).map((field, i) => withWindow(field, bounds[i])),
    ...keys.map(({ expression, compiled }) => ({ name: expression.kind === 'column' ? expression.name : 'key', type: compiled.type })),
    ...aggregates.map((a) => ({ name: a.expression.name, type: a.type })),
  ];
  const computed = new Map<string, number>();
  for (const expression of windowKeys) computed.set(canonical({ ...expression, table: undefined } as Expression), windowIndex(expression));
  for (const name of WINDOW_COLUMNS) computed.set(canonical({ kind: 'column', table: undefined, name, position: select.position }), WINDOW_COLUMNS.indexOf(name));
  keys.forEach(({ expression }, i) => computed.set(canonical(expression.kind === 'column' ? { ...expression, table: undefined } : expression), 3 + i));
  aggregates.forEach((a, i) => computed.set(canonical(a.expression), 3 + keys.length + i));
  const { keyOf, keyValues } = groupKey(keys.map((k) => k.compiled.evaluate));
  const assigner = assignerOf(relation, text);
  if (relation.function === 'SESSION') sessionKeysMatch(relation, keys.map((k) => k.expression), text);
  const rows = filtered(input, condition, context);
  const aggregated = rows
    .keyBy((row) => keyOf(row))
    .window(assigner)
    .aggregate<unknown[], Row, Row>(aggregateFunction(aggregates), (key, windowContext, [results], out) => {
      const { start, end } = windowContext.window;
      out.collect([start, end, end - 1, ...keyValues(key), ...(results ?? [])]);
    });
  sqlOperator(aggregated, context, 'window-aggregate', `WindowAggregate(groupBy=[${columnList(fields.slice(3, 3 + keys.length))}], window=[${relation.function}], select=[${columnList(fields.slice(3))}])`, 'insert-only');
  const grouped: PlannedRelation = { stream: aggregated, fields, rowtime: 2 };
  const outputScope: Scope = { ...scopeOf(fields, context, text), computed };
  return projectGrouped(select, grouped, outputScope, context, text);
}

function withWindow(field: Field, window: WindowBound | undefined): Field {
  return window ? { ...field, window } : field;
}

/** The upsert keys a projection keeps: where each key column went, if every one did. */
function keptKeys(updating: NonNullable<PlannedRelation['updating']>, positions: readonly number[]): NonNullable<PlannedRelation['updating']> {
  const keys = updating.keys.map((key) => positions.indexOf(key));
  const { versionTime, ...rest } = updating;
  const versionColumn = versionTime === undefined ? -1 : positions.indexOf(versionTime);
  return { ...rest, keys: keys.includes(-1) ? [] : keys, ...(versionColumn < 0 ? {} : { versionTime: versionColumn }) };
}

/**
 * GROUP BY without a window, as Flink's GroupAggregate: per key, the aggregates so far and a row
 * count, in keyed state; each input row gives +I for a new key, or -U of the old result and +U of
 * the new one, and nothing when the result did not change. Over an updating input, a -U or -D
 * row is taken back out of its key's aggregates, and a key left with no rows is deleted (-D).
 */
function planGroupAggregate(select: Select, input: PlannedRelation, calls: Extract<Expression, { kind: 'call' }>[], context: PlanContext, text: string): PlannedRelation {
  const inputScope = scopeOf(input.fields, context, text);
  const retracting = input.updating !== undefined;
  const windowEnd = windowEndOf(select.groupBy, inputScope);
  if (windowEnd !== undefined && !retracting) return planWindowedGroupAggregate(select, input, calls, windowEnd, context, text);
  const { keys, aggregates, condition, fields, computed, keyEvaluators, keyOf, aggregate } = grouping(select, input, calls, inputScope, retracting);
  const retract = (row: Row, accumulators: unknown[]) => aggregates.map((call, i) => (call.retract as NonNullable<typeof call.retract>)(accumulators[i], row));
  const accumulators = expiring(new ValueStateDescriptor<unknown[]>('accumulators'), context);
  // Over a changelog, how many rows each key holds: none left, the key is deleted.
  const rowCount = expiring(new ValueStateDescriptor<number>('rows'), context);
  const width = input.fields.length;
  const rows = filtered(input, condition, context);
  const producer = `GROUP BY ${select.groupBy.map((e) => (e.kind === 'column' ? e.name : 'an expression')).join(', ') || '()'}`;
  const aggregated = rows
    .keyBy((row) => (keys.length === 0 ? '' : keyOf(row)))
    .withState((state) => ({ accumulators: state.getState(accumulators), rows: retracting ? state.getState(rowCount) : undefined }))
    .process<Row>({
      processElement(row, { state }, out) {
        const adding = !retracting || row[width] === '+I' || row[width] === '+U';
        const before = state.accumulators.value();
        // A retraction of a row the key no longer holds (its state expired): nothing to take back.
        if (!adding && !before) return;
        // The result before the row, taken first: adding changes accumulators in place.
        const resultBefore = before && aggregate.getResult(before);
        const keyValues = keyEvaluators.map((evaluate) => evaluate(row));
        if (state.rows) {
          const count = (state.rows.value() ?? 0) + (adding ? 1 : -1);
          if (count <= 0) {
            if (resultBefore) out.collect([...keyValues, ...resultBefore, '-D']);
            state.accumulators.clear();
            state.rows.clear();
            return;
          }
          state.rows.update(count);
        }
        const after = adding ? aggregate.add(row, before ?? aggregate.createAccumulator()) : retract(row, before as unknown[]);
        state.accumulators.update(after);
        const result = [...keyValues, ...aggregate.getResult(after)];
        if (!resultBefore) {
          out.collect([...result, '+I']);
          return;
        }
        const previous = [...keyValues, ...resultBefore];
        if (JSON.stringify(previous) === JSON.stringify(result)) return;
        out.collect([...previous, '-U']);
        out.collect([...result, '+U']);
      },
    });
  const grouped: PlannedRelation = { stream: aggregated, fields, rowtime: undefined, updating: { keys: keys.map((_, i) => i), producer, ...(retracting ? { kinds: '+I, -U, +U, -D' } : {}) } };
  sqlOperator(aggregated, context, 'group-aggregate', `GroupAggregate(groupBy=[${columnList(fields.slice(0, keys.length))}], select=[${columnList(fields)}])`, changelogMode(grouped));
  return projectGrouped(select, grouped, { ...scopeOf(fields, context, text), computed }, context, text);
}

/**
 * SELECT DISTINCT, as Flink plans it: a GROUP BY of every column the SELECT gives, with no
 * aggregate, so a row is emitted the first time its values are seen (and, over a changelog,
 * deleted when no row holds them any more).
 */
function planDistinct(selected: PlannedRelation, select: Select, context: PlanContext, text: string): PlannedRelation {
  const columns = selected.fields.map((field): Expression => ({ kind: 'column', table: undefined, name: field.name, position: select.position }));
  const grouping: Select = { ...select, distinct: false, items: columns.map((expression) => ({ expression, alias: undefined })), where: undefined, groupBy: columns, having: undefined };
  const distinct = planGroupAggregate(grouping, { ...selected, fields: selected.fields.map((f) => ({ ...f, type: plainTime(f.type) })), rowtime: undefined }, [], context, text);
  return { ...distinct, updating: { ...(distinct.updating as NonNullable<PlannedRelation['updating']>), producer: 'SELECT DISTINCT' } };
}

/** A GROUP BY's keys and aggregates compiled over its input, the row it makes (keys, then aggregates' results) and where each stands in it. */
function grouping(select: Select, input: PlannedRelation, calls: readonly Extract<Expression, { kind: 'call' }>[], inputScope: Scope, retracting: boolean) {
  const keys = select.groupBy.map((expression) => ({ expression, compiled: compileExpression(expression, inputScope) }));
  const aggregates = calls.map((call) => compileAggregate(call, inputScope, retracting));
  const condition = select.where && compileBoolean(select.where, inputScope, 'WHERE');
  const windowOf = (expression: Expression) => (expression.kind === 'column' ? input.fields[resolveField(inputScope, expression.name, expression.table, expression.position)]?.window : undefined);
  const fields: Field[] = [
    ...keys.map(({ expression, compiled }) => withWindow({ name: expression.kind === 'column' ? expression.name : 'key', type: compiled.type }, windowOf(expression))),
    ...aggregates.map((a) => ({ name: a.expression.name, type: a.type })),
  ];
  const computed = new Map<string, number>();
  keys.forEach(({ expression }, i) => computed.set(canonical(expression.kind === 'column' ? { ...expression, table: undefined } : expression), i));
  aggregates.forEach((a, i) => computed.set(canonical(a.expression), keys.length + i));
  const keyEvaluators = keys.map((k) => k.compiled.evaluate);
  const { keyOf } = groupKey(keyEvaluators);
  return { keys, aggregates, condition, fields, computed, keyEvaluators, keyOf, aggregate: aggregateFunction(aggregates) };
}

/**
 * Where a GROUP BY's keys or a PARTITION BY hold the end of the rows' windows, if they hold both
 * its start and its end, as Flink's window aggregation and window Top-N group by them.
 */
function windowEndOf(keys: readonly Expression[], scope: Scope): WindowColumn | undefined {
  const bounds = keys.flatMap((expression) => windowColumnOf(expression, scope) ?? []);
  const end = bounds.find(({ window }) => window.bound === 'end');
  return end && bounds.some(({ window }) => window.bound === 'start' && window.of === end.window.of) ? end : undefined;
}

/**
 * A GROUP BY of the window_start and window_end of a window aggregation's results or of a window
 * table function's rows (as selected, under any name): Flink's window aggregation over them,
 * cascaded over an aggregation. Each group is aggregated as its rows come and emitted once,
 * insert-only, when the watermark passes the window's last millisecond; its state is then
 * cleared. A window table function's row behind the watermark is late, and dropped.
 */
function planWindowedGroupAggregate(select: Select, input: PlannedRelation, calls: Extract<Expression, { kind: 'call' }>[], windowEnd: WindowColumn, context: PlanContext, text: string): PlannedRelation {
  const { keys, condition, fields, computed, keyEvaluators, keyOf, aggregate } = grouping(select, input, calls, scopeOf(input.fields, context, text), false);
  const group = expiring(new ValueStateDescriptor<{ keys: Row; accumulators: unknown[] }>('window-group'), context);
  const aggregated = filtered(input, condition, context)
    .keyBy((row) => keyOf(row))
    .withState((state) => state.getState(group))
    .process<Row>({
      processElement(row, { state, timerService }) {
        const lastMillisecond = windowStillOpen(row, windowEnd, timerService().currentWatermark());
        if (lastMillisecond === undefined) return;
        const held = state.value();
        state.update({ keys: held?.keys ?? keyEvaluators.map((evaluate) => evaluate(row)), accumulators: aggregate.add(row, held?.accumulators ?? aggregate.createAccumulator()) });
        timerService().registerEventTimeTimer(lastMillisecond);
      },
      onTimer(_timestamp, { state }, out) {
        const held = state.value();
        if (!held) return;
        out.collect([...held.keys, ...aggregate.getResult(held.accumulators)]);
        state.clear();
      },
    });
  sqlOperator(
    aggregated,
    context,
    'window-aggregate',
    `WindowAggregate(groupBy=[${columnList(fields.slice(0, keys.length))}], window=[the input's windows], select=[${columnList(fields)}])`,
    'insert-only',
  );
  const emitted = emittedAtWindowEnd(fields);
  return projectGrouped(select, { stream: aggregated, fields: emitted, rowtime: undefined }, { ...scopeOf(emitted, context, text), computed }, context, text);
}

/** A session window is per key: its PARTITION BY columns are the aggregation's keys, as Flink's session aggregation requires. */
function sessionKeysMatch(relation: Extract<Relation, { kind: 'window' }>, keys: readonly Expression[], text: string): void {
  const grouped = keys.map((k) => (k.kind === 'column' ? k.name.toLowerCase() : '')).sort();
  const partitioned = relation.partitionBy.map((name) => name.toLowerCase()).sort();
  if (JSON.stringify(grouped) !== JSON.stringify(partitioned)) {
    throw new SqlUnsupportedError('a SESSION window aggregation whose GROUP BY keys are not its PARTITION BY columns', relation.position, text);
  }
}

function projectGrouped(select: Select, grouped: PlannedRelation, scope: Scope, context: PlanContext, text: string): PlannedRelation {
  const having = select.having && compileBoolean(select.having, scope, 'HAVING');
  const items = select.items.map((item, index) => {
    if (item.expression.kind === 'star') throw new SqlError('SELECT * cannot stand in a grouped query: name the keys and aggregates', item.expression.position, text);
    const expression = item.expression;
    const compiled: Compiled = compileExpression(expression, scope);
    return { name: item.alias ?? (expression.kind === 'column' ? expression.name : `EXPR$${index}`), compiled, expression };
  });
  const rowtime = items.findIndex(({ expression }) => expression.kind === 'column' && expression.name.toLowerCase() === 'window_time');
  const kept = having ? sqlOperator(grouped.stream.filter((row) => having.evaluate(row) === true), context, 'having', 'Calc(having)', changelogMode(grouped)) : grouped.stream;
  const evaluators = items.map((item) => item.compiled.evaluate);
  const width = grouped.fields.length;
  const project = grouped.updating ? (row: Row) => [...evaluators.map((evaluate) => evaluate(row)), row[width] ?? null] : (row: Row) => evaluators.map((evaluate) => evaluate(row));
  const stream = sqlOperator(kept.map(project), context, 'select', `Calc(select=[${items.map((i) => i.name).join(', ')}])`, changelogMode(grouped));
  const positions = items.map(({ expression }) => scope.computed?.get(canonical(expression.kind === 'column' ? { ...expression, table: undefined } : expression)) ?? -1);
  const fields = uniqueNames(items).map((item, i) => withWindow({ name: item.name, type: item.compiled.type }, grouped.fields[positions[i] ?? -1]?.window));
  return { stream, fields, rowtime: rowtime < 0 ? undefined : rowtime, ...(grouped.updating ? { updating: keptKeys(filteredUpdates(grouped.updating, having), positions) } : {}) };
}

/** Checks that a query's columns fit a table's, as INSERT INTO needs: the same count, and types that widen to the table's. */
export function alignToSink(query: PlannedRelation, sinkFields: readonly Field[], context: PlanContext, table: string, text: string, position: Select['position']): DataStream<Row> {
  if (query.fields.length !== sinkFields.length) {
    throw new SqlError(`the query has ${query.fields.length} columns and ${table} takes ${sinkFields.length} (${sinkFields.map((f) => f.name).join(', ')})`, position, text);
  }
  const widening = sinkFields.map((sink, i) => {
    const from = (query.fields[i] as Field).type;
    const to = sink.type;
    const fits = from.kind === 'NULL' || from.kind === to.kind || widensTo(from.kind, to.kind);
    if (!fits) {
      throw new SqlError(`column types of the query and ${table} do not match: column ${i + 1} (${sink.name}) takes ${typeName(to)}, and the query gives ${typeName(from)}; CAST it`, position, text);
    }
    return from.kind === to.kind && (to.kind !== 'DECIMAL' || (from as { scale: number }).scale === to.scale) ? undefined : { from, to };
  });
  if (widening.every((w) => w === undefined)) return query.stream;
  const cast = query.stream.map((row) => row.map((value, i) => (widening[i] ? widen(value, widening[i].from, widening[i].to) : value)));
  return sqlOperator(cast, context, 'sink-cast', `Calc(cast to ${table}'s types)`, changelogMode(query));
}
