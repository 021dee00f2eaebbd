import { MapStateDescriptor, type MapState } from '../api/state.js';
import type { Collector } from '../api/functions.js';
import type { Expression, Relation } from './ast.js';
import type { Field, Row, Scope, WindowColumn } from './compiled.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { compileBoolean, compileExpression, conjunction, conjuncts, resolveField, subexpressions, windowColumnOf } from './expressions.js';
import { planIntervalJoin, timeInterval } from './interval-joins.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, groupKey, scopeOf, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import { commonType } from './type-rules.js';
import { plainTime, withNullable, type SqlType, type SqlValue } from './types.js';
import { widen } from './values.js';
import { planTemporalJoin } from './temporal-joins.js';
import { planWindowJoin } from './window-joins.js';

type JoinRelation = Extract<Relation, { kind: 'join' }>;

/**
 * One input's rows of a join key, as Flink's join state views keep them: each distinct row with
 * how many times it arrived and, for the outer side of an outer join, how many rows of the other
 * input it has matched (0: it was emitted padded with NULLs, and a first match retracts that).
 */
type StoredRows = MapState<string, [count: number, matches: number]>;

/** The columns an expression names, as positions in the scope's row. */
function columnsOf(expression: Expression | undefined, scope: Scope, found: number[] = []): number[] {
  if (!expression) return found;
  if (expression.kind === 'column') found.push(resolveField(scope, expression.name, expression.table, expression.position));
  for (const child of subexpressions(expression)) columnsOf(child, scope, found);
  return found;
}

/** Whether every column an expression names is in the scope: a comma join takes the WHERE's conditions on its own inputs. */
function within(expression: Expression, scope: Scope): boolean {
  try {
    columnsOf(expression, scope);
    return true;
  } catch (error) {
    if (error instanceof SqlError) return false;
    throw error;
  }
}

/** Which inputs an expression reads: 'left', 'right', 'both', or 'none' for a constant. */
function sidesOf(expression: Expression, scope: Scope, leftWidth: number): 'left' | 'right' | 'both' | 'none' {
  const columns = columnsOf(expression, scope);
  const left = columns.some((c) => c < leftWidth);
  const right = columns.some((c) => c >= leftWidth);
  return left && right ? 'both' : left ? 'left' : right ? 'right' : 'none';
}

/** An equality between one input's expression and the other's: the join's keys. */
interface EquiKey {
  readonly left: Expression;
  readonly right: Expression;
}

function equiKey(expression: Expression, scope: Scope, leftWidth: number): EquiKey | undefined {
  if (expression.kind !== 'binary' || expression.operator !== '=') return undefined;
  const a = sidesOf(expression.left, scope, leftWidth);
  const b = sidesOf(expression.right, scope, leftWidth);
  if (a === 'left' && b === 'right') return { left: expression.left, right: expression.right };
  if (a === 'right' && b === 'left') return { left: expression.right, right: expression.left };
  return undefined;
}

/** The columns after a join: nullable where an outer join may pad them with NULL, and no longer time attributes, as in Flink. */
function nullable(fields: readonly Field[], padded: boolean): Field[] {
  return fields.map((f) => ({ ...f, type: plainTime(padded ? withNullable(f.type, true) : f.type) }));
}

/** One input's join keys, each widened to the type both inputs' keys compare in. */
export function keyEvaluators(expressions: readonly Expression[], scope: Scope, types: readonly SqlType[]): ((row: Row) => SqlValue)[] {
  return expressions.map((expression, i) => {
    const { evaluate, type } = compileExpression(expression, scope);
    return (row) => widen(evaluate(row), type, types[i] as SqlType);
  });
}

/**
 * A regular join, as Flink's StreamingJoinOperator runs it: both inputs keyed by the ON
 * clause's equalities, each input's rows so far in keyed state, and each new row joined with
 * the other input's rows of its key that meet the rest of the condition. Over insert-only
 * inputs an inner join only inserts; an outer join emits a row padded with NULLs while it has
 * no match, and retracts it (-D) when its first match arrives. Joins take changelogs too: a -U
 * or -D row leaves its input's rows and retracts its pairs, and an outer row whose last match
 * it was is padded again (+I), as in Flink's join.
 *
 * `table.exec.state.ttl` expires each stored row on its own, as Flink's does. A comma or CROSS
 * JOIN joins by the conditions of `where` (the query's WHERE) on its inputs' columns; the WHERE
 * still filters what it gives.
 */
export function planRegularJoin(
  join: JoinRelation,
  inputs: { readonly left: PlannedRelation; readonly right: PlannedRelation },
  where: Expression | undefined,
  context: PlanContext,
  text: string,
): PlannedRelation {
  const { left, right } = inputs;
  const joinedFields = [...nullable(left.fields, join.type === 'RIGHT' || join.type === 'FULL'), ...nullable(right.fields, join.type === 'LEFT' || join.type === 'FULL')];
  const scope = scopeOf(joinedFields, context, text);
  const width = left.fields.length;
  const condition = join.condition ? conjuncts(join.condition) : conjuncts(where).filter((conjunct) => within(conjunct, scope));
  const keys: EquiKey[] = [];
  const residual: Expression[] = [];
  for (const conjunct of condition) {
    const key = equiKey(conjunct, scope, width);
    if (key) keys.push(key);
    else residual.push(conjunct);
  }
  if (keys.length === 0) {
    throw new SqlUnsupportedError(`a ${join.type} JOIN without an equality between a column of each input (a cross join)`, join.position, text);
  }
  const leftScope = scopeOf(left.fields, context, text);
  const rightScope = scopeOf(right.fields, context, text);
  const types = keys.map((key, i) =>
    commonType([compileExpression(key.left, leftScope).type, compileExpression(key.right, rightScope).type], scope, join.position, `the join's equality ${i + 1}`),
  );
  const sideKeys = [keyEvaluators(keys.map((k) => k.left), leftScope, types), keyEvaluators(keys.map((k) => k.right), rightScope, types)] as const;
  const keyOf = [groupKey(sideKeys[0]).keyOf, groupKey(sideKeys[1]).keyOf] as const;
  const residualCondition = conjunction(residual);
  const matches = residualCondition && compileBoolean(residualCondition, scope, 'ON');
  const outer = [join.type === 'LEFT' || join.type === 'FULL', join.type === 'RIGHT' || join.type === 'FULL'] as const;
  const joinType = join.type === 'INNER' ? 'InnerJoin' : `${join.type[0]}${join.type.slice(1).toLowerCase()}OuterJoin`;
  const nullKey = [(row: Row) => sideKeys[0].some((evaluate) => evaluate(row) === null), (row: Row) => sideKeys[1].some((evaluate) => evaluate(row) === null)] as const;
  const asOf = join.right.kind === 'table' ? join.right.asOf : undefined;
  if (asOf) {
    const versionTime = versionedTable(join, inputs, keys.map((key) => key.right), { scope, rightScope }, text);
    if (asOf.kind !== 'column' || left.rowtime === undefined || resolveField(scope, asOf.name, asOf.table, asOf.position) !== left.rowtime) {
      throw new SqlUnsupportedError('FOR SYSTEM_TIME AS OF other than the probe side\'s time attribute (a processing-time or lookup join)', asOf.position, text);
    }
    if (left.updating) throw new SqlUnsupportedError(`a temporal join whose probe side is an updating result (of ${left.updating.producer})`, join.position, text);
    if (join.type !== 'INNER' && join.type !== 'LEFT') throw new SqlError(`a temporal join is INNER or LEFT, not ${join.type}`, join.position, text);
    return planTemporalJoin(
      { inputs: [left, right], keyOf, nullKey: nullKey[0], times: [left.rowtime, versionTime], matches, outer: outer[0], fields: joinedFields, equalities: equalitiesOf(keys) },
      context,
    );
  }
  const times = left.rowtime !== undefined && right.rowtime !== undefined ? ([left.rowtime, width + right.rowtime] as const) : undefined;
  // Bounds on right − left from both sides make Flink's interval join, which drops its rows as the
  // watermark passes their interval; one bound alone, or a bound of another shape, is a regular
  // join's condition, in Flink too.
  const interval = times && timeInterval(residual, { left: times[0], right: times[1] }, (column) => resolveField(scope, column.name, column.table, column.position));
  if (times && interval) {
    return planIntervalJoin(
      { inputs: [left, right], keyOf, nullKey, times: [times[0], times[1] - width], interval, matches, outer, joinType, fields: joinedFields, equalities: equalitiesOf(keys), position: join.position },
      context,
      text,
    );
  }
  const ends = !left.updating && !right.updating ? windowEnds(keys, scope, width) : undefined;
  if (ends) {
    return planWindowJoin({ inputs: [left, right], keyOf, nullKey, ends, matches, outer, joinType, fields: joinedFields, equalities: equalitiesOf(keys) }, context);
  }
  const changelogInputs = [left.updating !== undefined, right.updating !== undefined] as const;
  const widths = [left.fields.length, right.fields.length] as const;
  const updating = outer[0] || outer[1] || changelogInputs[0] || changelogInputs[1];
  const kinds = (outer[0] || outer[1]) && !changelogInputs[0] && !changelogInputs[1] ? '+I, -D' : '+I, -U, +U, -D';
  const descriptor = (name: string) => expiring(new MapStateDescriptor<string, [number, number]>(name), context);
  const padding = [left.fields.map(() => null), right.fields.map(() => null)] as const;
  const emit = (out: Collector<Row>, row: Row, kind: string) => out.collect(updating ? [...row, kind] : row);
  const joined = sidedUnion(left.stream, right.stream)
    .keyBy((element) => keyOf[element.side](element.row))
    .withState((state) => [state.getMapState(descriptor('left-rows')), state.getMapState(descriptor('right-rows'))] as const)
    .process<Row>({
      processElement({ side, row: received }, { state }, out) {
        const own: StoredRows = state[side];
        const other: StoredRows = state[side === 0 ? 1 : 0];
        const otherSide = side === 0 ? 1 : 0;
        const pair = (mine: Row, theirs: Row) => (side === 0 ? [...mine, ...theirs] : [...theirs, ...mine]);
        // A changelog's row carries its kind after its columns; an inner join passes it on.
        const kind = changelogInputs[side] ? String(received[widths[side]]) : '+I';
        const row = changelogInputs[side] ? received.slice(0, widths[side]) : received;
        const retracting = kind === '-U' || kind === '-D';
        // SQL's equality never holds for NULL: such a row matches nothing, and nothing needs it later.
        if (sideKeys[side].some((evaluate) => evaluate(row) === null)) {
          if (outer[side]) emit(out, pair(row, padding[otherSide]), retracting ? '-D' : '+I');
          return;
        }
        const key = JSON.stringify(row);
        // The other input's rows that pair with this one: each distinct row, how many times it
        // arrived and how many matches it has, and the pair.
        const partners = () =>
          other.entries().flatMap(([stored, [count, theirMatches]]) => {
            const theirs = JSON.parse(stored) as Row;
            const both = pair(row, theirs);
            return matches && matches.evaluate(both) !== true ? [] : [{ stored, theirs, both, count, theirMatches }];
          });
        // A pair's kind, as Flink's: an inner join forwards the row's; an outer join inserts with
        // +I, and retracts with -D from its outer input and with the row's kind from its inner one.
        const pairKind = !(outer[0] || outer[1]) ? kind : !retracting ? '+I' : outer[side] ? '-D' : kind;
        if (retracting) {
          // Taken back: out of this input's rows, each of its pairs retracted, and an outer row it
          // was the last match of padded again.
          const [count = 0, ownMatches = 0] = own.get(key) ?? [];
          if (count > 1) own.put(key, [count - 1, ownMatches]);
          else own.remove(key);
          const paired = partners();
          for (const { stored, theirs, both, count: theirCount, theirMatches } of paired) {
            for (let i = 0; i < theirCount; i++) {
              emit(out, both, pairKind);
              if (outer[otherSide] && theirMatches === 1) emit(out, pair(padding[side], theirs), '+I');
            }
            if (outer[otherSide]) other.put(stored, [theirCount, Math.max(0, theirMatches - 1)]);
          }
          if (paired.length === 0 && outer[side]) emit(out, pair(row, padding[otherSide]), '-D');
          return;
        }
        const held = own.get(key);
        // A row new to this input's rows is one more match of the other input's; a copy of one is not, as in Flink.
        const additional = outer[otherSide] && held === undefined;
        let matched = 0;
        for (const { stored, theirs, both, count, theirMatches } of partners()) {
          matched += count;
          for (let i = 0; i < count; i++) {
            if (outer[otherSide] && theirMatches === 0) emit(out, pair(padding[side], theirs), '-D');
            emit(out, both, pairKind);
          }
          if (outer[otherSide] && (theirMatches === 0 || additional)) other.put(stored, [count, theirMatches + 1]);
        }
        if (outer[side] && matched === 0) emit(out, pair(row, padding[otherSide]), '+I');
        own.put(key, [(held?.[0] ?? 0) + 1, matched]);
      },
    });
  const relation: PlannedRelation = {
    stream: joined,
    fields: joinedFields,
    rowtime: undefined,
    ...(updating ? { updating: { keys: [], producer: `the ${join.type} JOIN`, kinds } } : {}),
  };
  const equalities = equalitiesOf(keys);
  const rest = residual.length === 0 ? '' : ` AND ${residual.length} more condition${residual.length === 1 ? '' : 's'}`;
  sqlOperator(
    joined,
    context,
    'join',
    `Join(joinType=[${joinType}], where=[${equalities}${rest}], select=[${columnList(joinedFields)}], state=[each input's rows by join key])`,
    changelogMode(relation),
  );
  return relation;
}

/**
 * The version time of a temporal join's versioned table, checked to be one: an updating result
 * with a key and a time for each row (a deduplication that keeps each key's last row by its time
 * attribute), which the ON clause's equalities name in full.
 */
function versionedTable(join: JoinRelation, inputs: { readonly right: PlannedRelation }, rightKeys: readonly Expression[], scopes: { readonly scope: Scope; readonly rightScope: Scope }, text: string): number {
  const { right } = inputs;
  const versionTime = right.updating?.versionTime;
  const name = join.right.kind === 'table' ? join.right.name : 'the versioned table';
  if (!right.updating || right.updating.keys.length === 0 || versionTime === undefined) {
    throw new SqlError(
      `${name} is not a versioned table, which FOR SYSTEM_TIME AS OF reads: make it a view that keeps each key's last row by its time attribute ` +
        "(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY key ORDER BY time DESC) AS rn FROM t) WHERE rn = 1)",
      join.position,
      text,
    );
  }
  const named = new Set(rightKeys.flatMap((key) => (key.kind === 'column' ? [resolveField(scopes.rightScope, key.name, key.table, key.position)] : [])));
  const missing = right.updating.keys.filter((key) => !named.has(key));
  if (missing.length > 0) {
    throw new SqlError(
      `a temporal join's ON must equate every column of ${name}'s key (${right.updating.keys.map((key) => right.fields[key]?.name ?? '').join(', ')}) with the probe side; it leaves out ${missing.map((key) => right.fields[key]?.name ?? '').join(', ')}`,
      join.position,
      text,
    );
  }
  return versionTime;
}

/**
 * Each input's window_end column, when the join's equalities hold both inputs' window_start and
 * window_end, each input's of one windowing: Flink's window join.
 */
function windowEnds(keys: readonly EquiKey[], scope: Scope, leftWidth: number): readonly [WindowColumn, WindowColumn] | undefined {
  const bounds = keys.flatMap((key) => {
    const [left, right] = [windowColumnOf(key.left, scope), windowColumnOf(key.right, scope)];
    return left && right && left.window.bound === right.window.bound ? [{ left, right }] : [];
  });
  const end = bounds.find(({ left }) => left.window.bound === 'end');
  const start = bounds.find(({ left }) => left.window.bound === 'start');
  if (!end || !start || start.left.window.of !== end.left.window.of || start.right.window.of !== end.right.window.of) return undefined;
  return [end.left, { ...end.right, index: end.right.index - leftWidth }];
}

function equalitiesOf(keys: readonly EquiKey[]): string {
  return keys.map((k) => `${describe(k.left)} = ${describe(k.right)}`).join(' AND ');
}

/** An equality's side for `explain`: its column, or that it is an expression. */
function describe(expression: Expression): string {
  if (expression.kind !== 'column') return 'an expression';
  return expression.table ? `${expression.table}.${expression.name}` : expression.name;
}
