import { ValueStateDescriptor } from '../api/state.js';
import type { Expression } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { compileExpression } from './expressions.js';
import { keyEvaluators } from './joins.js';
import type { PlannedRelation } from './kafka-table.js';
import { appendOnly, changelogMode, expiring, scopeOf, sqlOperator, type PlanContext } from './plan-context.js';
import { commonType } from './type-rules.js';
import { plainTime } from './types.js';

/** `x IN (SELECT …)`, as the parser reads it. */
export type SubqueryIn = Extract<Expression, { kind: 'in' }> & { readonly query: NonNullable<Extract<Expression, { kind: 'in' }>['query']> };

export function isSubqueryIn(expression: Expression): expression is SubqueryIn {
  return expression.kind === 'in' && expression.query !== undefined;
}

/** A WHERE condition that is a semi join (`IN (SELECT …)`, EXISTS) or an anti join (NOT EXISTS): the lookup, and whether it is negated. */
export function subqueryCondition(condition: Expression): { lookup: SubqueryIn; anti: boolean } | undefined {
  if (isSubqueryIn(condition)) return { lookup: condition, anti: false };
  if (condition.kind === 'unary' && condition.operator === 'NOT' && isSubqueryIn(condition.operand)) return { lookup: condition.operand, anti: true };
  return undefined;
}

/**
 * `x IN (SELECT y …)` ANDed into a WHERE, as Flink's semi join runs it: both inputs keyed by the
 * value looked up, in their common type; a row is emitted once the subquery has given a row of
 * its value, at once if one came before it, else when the first one comes, and never
 * retracted, since both inputs only insert. A NULL value matches nothing. State: per value,
 * whether the subquery has given it, and the rows waiting for it.
 *
 * `anti`, a NOT EXISTS: a row is emitted at once (+I) while the subquery has not given its value,
 * and retracted (-D) when the subquery first gives it; a row of a NULL value is always emitted.
 */
export function planSemiJoin(input: PlannedRelation, condition: SubqueryIn, anti: boolean, subquery: PlannedRelation, context: PlanContext, text: string): PlannedRelation {
  if (condition.negated || (anti && !condition.fromExists)) {
    throw new SqlUnsupportedError('NOT IN (subquery) (a NULL-aware anti join; NOT EXISTS runs)', condition.position, text);
  }
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
  // One value per side: a key of one value is the value itself, as groupKey makes it.
  const keyOf = [leftKey, rightKey] as const;
  const sided = (side: 0 | 1, relation: PlannedRelation) => relation.stream.map((row) => ({ side, row }));
  const joined = sided(0, left)
    .union(sided(1, right))
    .keyBy(({ side, row }) => keyOf[side](row))
    .withState((state) => ({
      given: state.getState(expiring(new ValueStateDescriptor<boolean>('value-given'), context)),
      waiting: state.getState(expiring(new ValueStateDescriptor<Row[]>('rows-waiting'), context)),
    }))
    .process<Row>({
      processElement({ side, row }, { state }, out) {
        const nullKey = (side === 0 ? leftKey : rightKey)(row) === null;
        if (anti) {
          if (side === 0 && (nullKey || !state.given.value())) out.collect([...row, '+I']);
          if (side === 0 && !nullKey && !state.given.value()) state.waiting.update([...(state.waiting.value() ?? []), row]);
          if (side === 1 && !nullKey && !state.given.value()) {
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
  const fields: Field[] = left.fields.map((field) => ({ ...field, type: plainTime(field.type) }));
  const relation: PlannedRelation = { stream: joined, fields, rowtime: undefined, ...(anti ? { updating: { keys: [], producer: 'NOT EXISTS (an anti join)', kinds: '+I, -D' } } : {}) };
  const plan = anti
    ? 'Join(joinType=[LeftAntiJoin], where=[NOT EXISTS], state=[per value, whether the subquery gave it, and the rows emitted until it does])'
    : 'Join(joinType=[LeftSemiJoin], where=[IN (subquery)], state=[per value, whether the subquery gave it, and the rows waiting for it])';
  sqlOperator(joined, context, anti ? 'anti-join' : 'semi-join', plan, changelogMode(relation));
  return relation;
}
