import type { SingleOutputStreamOperator } from '../api/datastream.js';
import { MapStateDescriptor, ValueStateDescriptor } from '../api/state.js';
import type { Expression } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError } from './errors.js';
import { compileExpression } from './expressions.js';
import { keyEvaluators } from './joins.js';
import type { PlannedRelation } from './kafka-table.js';
import { appendOnly, changelogMode, expiring, scopeOf, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import { commonType } from './type-rules.js';
import { plainTime, type SqlValue } from './types.js';

/** `x IN (SELECT …)`, as the parser reads it. */
export type SubqueryIn = Extract<Expression, { kind: 'in' }> & { readonly query: NonNullable<Extract<Expression, { kind: 'in' }>['query']> };

export function isSubqueryIn(expression: Expression): expression is SubqueryIn {
  return expression.kind === 'in' && expression.query !== undefined;
}

/**
 * How a WHERE condition over a subquery joins: `IN (SELECT …)` and EXISTS as a semi join, NOT
 * EXISTS as an anti join, NOT IN as Flink's null-aware anti join (a NULL on either side makes the
 * condition unknown, so a NULL the subquery gives passes no row).
 */
export type SubqueryJoin = 'semi' | 'anti' | 'null-aware anti';

/** A WHERE condition that is a semi or anti join: the lookup, and how it joins. */
export function subqueryCondition(condition: Expression): { lookup: SubqueryIn; join: SubqueryJoin } | undefined {
  if (isSubqueryIn(condition)) return { lookup: condition, join: condition.negated ? 'null-aware anti' : 'semi' };
  if (condition.kind !== 'unary' || condition.operator !== 'NOT' || !isSubqueryIn(condition.operand)) return undefined;
  const lookup = condition.operand;
  // NOT (x NOT IN (…)) is x IN (…): both are unknown, so filtered out, where a NULL makes one so.
  return { lookup, join: lookup.negated ? 'semi' : lookup.fromExists ? 'anti' : 'null-aware anti' };
}

/**
 * A subquery condition ANDed into a WHERE, as Flink's semi and anti joins run it: both inputs
 * compared by the value looked up, in their common type.
 */
export function planSubqueryJoin(input: PlannedRelation, condition: SubqueryIn, join: SubqueryJoin, subquery: PlannedRelation, context: PlanContext, text: string): PlannedRelation {
  const left = appendOnly(input, 'IN (subquery)', condition.position, text);
  const right = appendOnly(subquery, 'IN (subquery) of an updating result', condition.position, text);
  const columns = right.fields.filter((field) => !field.hidden);
  const [column] = columns;
  if (!column || columns.length !== 1) throw new SqlError(`the subquery of IN must select one column, not ${columns.length}`, condition.position, text);
  const leftScope = scopeOf(left.fields, context, text);
  const rightScope = scopeOf(right.fields, context, text);
  const looked: Expression = { kind: 'column', table: column.qualifier, name: column.name, position: condition.position };
  const type = commonType(
    [compileExpression(condition.operand, leftScope).type, compileExpression(looked, rightScope).type],
    leftScope,
    condition.position,
    'IN (subquery)',
  );
  const [leftKey] = keyEvaluators([condition.operand], leftScope, [type]);
  const [rightKey] = keyEvaluators([looked], rightScope, [type]);
  if (!leftKey || !rightKey) throw new Error('IN (subquery) without a key');
  const sides: Sides = { left, right, keyOf: [leftKey, rightKey] };
  return join === 'null-aware anti' ? planNullAwareAntiJoin(sides, context) : planKeyedSemiJoin(sides, join === 'anti', context);
}

interface Sides {
  readonly left: PlannedRelation;
  readonly right: PlannedRelation;
  /** The value each side's row looks up or gives: the left's first. */
  readonly keyOf: readonly [(row: Row) => SqlValue, (row: Row) => SqlValue];
}

/** The join's result: the left's rows, their times plain, and for an anti join a changelog of +I and -D. */
function joinResult(joined: SingleOutputStreamOperator<Row>, { left }: Sides, producer: string | undefined, plan: string, context: PlanContext): PlannedRelation {
  const fields: Field[] = left.fields.map((field) => ({ ...field, type: plainTime(field.type) }));
  const relation: PlannedRelation = { stream: joined, fields, rowtime: undefined, ...(producer ? { updating: { keys: [], producer, kinds: '+I, -D' } } : {}) };
  sqlOperator(joined, context, producer ? 'anti-join' : 'semi-join', plan, changelogMode(relation));
  return relation;
}

/**
 * `x IN (SELECT y …)` and EXISTS: keyed by the value; a row is emitted once the subquery has
 * given a row of its value, at once if one came before it, else when the first one comes, and
 * never retracted, since both inputs only insert. A NULL value matches nothing. State: per value,
 * whether the subquery has given it, and the rows waiting for it.
 *
 * `anti`, a NOT EXISTS: a row is emitted at once (+I) while the subquery has not given its value,
 * and retracted (-D) when the subquery first gives it; a row of a NULL value is always emitted.
 */
function planKeyedSemiJoin(sides: Sides, anti: boolean, context: PlanContext): PlannedRelation {
  const { keyOf } = sides;
  const joined = sidedUnion(sides.left.stream, sides.right.stream)
    .keyBy(({ side, row }) => keyOf[side](row))
    .withState((state) => ({
      given: state.getState(expiring(new ValueStateDescriptor<boolean>('value-given'), context)),
      waiting: state.getState(expiring(new ValueStateDescriptor<Row[]>('rows-waiting'), context)),
    }))
    .process<Row>({
      processElement({ side, row }, { state }, out) {
        const nullKey = keyOf[side](row) === null;
        if (anti) {
          const given = !nullKey && state.given.value() === true;
          if (side === 0 && !given) out.collect([...row, '+I']);
          if (side === 0 && !nullKey && !given) state.waiting.update([...(state.waiting.value() ?? []), row]);
          if (side === 1 && !nullKey && !given) {
            state.given.update(true);
            for (const emitted of state.waiting.value() ?? []) out.collect([...emitted, '-D']);
            state.waiting.clear();
          }
          return;
        }
        if (nullKey) return;
        if (side === 0) {
          if (state.given.value()) out.collect(row);
          else state.waiting.update([...(state.waiting.value() ?? []), row]);
          return;
        }
        if (state.given.value()) return;
        state.given.update(true);
        for (const waiting of state.waiting.value() ?? []) out.collect(waiting);
        state.waiting.clear();
      },
    });
  return anti
    ? joinResult(joined, sides, 'NOT EXISTS (an anti join)', 'Join(joinType=[LeftAntiJoin], where=[NOT EXISTS], state=[per value, whether the subquery gave it, and the rows emitted until it does])', context)
    : joinResult(joined, sides, undefined, 'Join(joinType=[LeftSemiJoin], where=[IN (subquery)], state=[per value, whether the subquery gave it, and the rows waiting for it])', context);
}

/**
 * `x NOT IN (SELECT y …)`: a row is emitted (+I) while no y equals its x, and retracted (-D) when
 * one comes; a row whose x is NULL only while the subquery is empty; and once the subquery gives
 * a NULL, every row emitted is retracted and none is emitted again. That NULL concerns every
 * row, so the join is one key, as Flink runs it on one instance. State: the values the subquery
 * has given, whether it gave a NULL, and the rows emitted, by value.
 */
function planNullAwareAntiJoin(sides: Sides, context: PlanContext): PlannedRelation {
  const { keyOf } = sides;
  const joined = sidedUnion(sides.left.stream, sides.right.stream)
    .keyBy(() => 0)
    .withState((state) => ({
      given: state.getMapState(expiring(new MapStateDescriptor<string, true>('values-given'), context)),
      nullGiven: state.getState(expiring(new ValueStateDescriptor<boolean>('null-given'), context)),
      emitted: state.getMapState(expiring(new MapStateDescriptor<string, Row[]>('rows-emitted-by-value'), context)),
    }))
    .process<Row>({
      processElement({ side, row }, { state }, out) {
        if (state.nullGiven.value()) return;
        const value = keyOf[side](row);
        const key = JSON.stringify(value);
        const retract = (keys: readonly string[]) => {
          for (const emittedKey of keys) {
            for (const emitted of state.emitted.get(emittedKey) ?? []) out.collect([...emitted, '-D']);
            state.emitted.remove(emittedKey);
          }
        };
        if (side === 0) {
          if (value === null ? !state.given.isEmpty() : state.given.contains(key)) return;
          out.collect([...row, '+I']);
          state.emitted.put(key, [...(state.emitted.get(key) ?? []), row]);
          return;
        }
        if (state.given.isEmpty()) retract([JSON.stringify(null)]);
        if (value === null) {
          state.nullGiven.update(true);
          retract(state.emitted.keys());
          state.given.clear();
        } else if (!state.given.contains(key)) {
          state.given.put(key, true);
          retract([key]);
        }
      },
    });
  return joinResult(
    joined,
    sides,
    'NOT IN (a null-aware anti join)',
    'Join(joinType=[LeftAntiJoin], where=[NOT IN, null-aware], state=[the values the subquery gave, whether it gave a NULL, and the rows emitted, by value])',
    context,
  );
}
