import { ValueStateDescriptor } from '../api/state.js';
import type { Expression, OverClause, Select } from './ast.js';
import { emittedAtWindowEnd, windowStillOpen, type Compiled, type Field, type Row, type WindowColumn } from './compiled.js';
import { SqlUnsupportedError } from './errors.js';
import { compileExpression, conjunction, conjuncts, resolveField } from './expressions.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, groupKey, scopeOf, sqlOperator, type PlanContext } from './plan-context.js';
import { BIGINT, isTemporal, plainTime, type SqlValue } from './types.js';
import { compareValues } from './values.js';

/** The column a Top-N adds for the rank, before the query that selects ROW_NUMBER() names it. */
export const RANK_COLUMN = '$rank';

/**
 * A Top-N as Flink recognizes one: a subquery that selects `ROW_NUMBER() OVER (PARTITION BY …
 * ORDER BY …)`, and a WHERE over it that keeps the ranks up to N.
 */
export interface Ranking {
  /** The subquery, with its ROW_NUMBER() item at `rankItem`. */
  readonly inner: Select;
  readonly rankItem: number;
  readonly over: OverClause;
  /** The first rank kept (1 unless a condition such as `rn >= 2` skips the first ones). */
  readonly first: number;
  /** The last rank kept. */
  readonly limit: number;
  /** Whether the outer query selects the rank: if not, Flink neither computes nor emits it. */
  readonly rankSelected: boolean;
  /** The outer WHERE without the conditions on the rank, which the Top-N keeps. */
  readonly where: Expression | undefined;
}

/** The ranks a condition on the rank column keeps (`rn <= 3`, `rn < 4`, `rn = 2`, `rn >= 2`, `rn > 1`, `rn BETWEEN 2 AND 4`), if it is one. */
function rankBounds(condition: Expression, rankName: string): { first?: number; last?: number } | undefined {
  const wholeNumber = (bound: Expression) => (bound.kind === 'literal' && typeof bound.value === 'number' && Number.isInteger(bound.value) ? bound.value : undefined);
  const isRank = (operand: Expression) => operand.kind === 'column' && operand.name.toLowerCase() === rankName;
  if (condition.kind === 'between' && !condition.negated && isRank(condition.operand)) {
    const [first, last] = [wholeNumber(condition.low), wholeNumber(condition.high)];
    return first === undefined || last === undefined ? undefined : { first, last };
  }
  if (condition.kind !== 'binary' || !isRank(condition.left)) return undefined;
  const bound = wholeNumber(condition.right);
  if (bound === undefined) return undefined;
  switch (condition.operator) {
    case '<=':
      return { last: bound };
    case '<':
      return { last: bound - 1 };
    case '=':
      return { first: bound, last: bound };
    case '>=':
      return { first: bound };
    case '>':
      return { first: bound + 1 };
    default:
      return undefined;
  }
}

/** The Top-N a query makes of its FROM subquery, or undefined when that subquery selects no ROW_NUMBER() OVER. */
export function rankingOf(select: Select, text: string): Ranking | undefined {
  if (select.from.kind !== 'subquery' || select.from.query.kind !== 'select') return undefined;
  const inner = select.from.query;
  const rankItem = inner.items.findIndex(({ expression }) => expression.kind === 'call' && expression.name === 'ROW_NUMBER' && expression.over);
  const item = inner.items[rankItem];
  if (!item || item.expression.kind !== 'call' || !item.expression.over) return undefined;
  const rankName = (item.alias ?? `EXPR$${rankItem}`).toLowerCase();
  const over = item.expression.over;
  const conditions = conjuncts(select.where).map((condition) => ({ condition, bounds: rankBounds(condition, rankName) }));
  const limits = conditions.flatMap(({ bounds }) => bounds?.last ?? []);
  const firsts = conditions.flatMap(({ bounds }) => bounds?.first ?? []);
  const where = conjunction(conditions.flatMap(({ condition, bounds }) => (bounds === undefined ? [condition] : [])));
  if (limits.length === 0) {
    throw new SqlUnsupportedError(`ROW_NUMBER() without a WHERE ${rankName} <= N over it (an OVER aggregation rather than a Top-N)`, item.expression.position, text);
  }
  if (over.orderBy.length === 0) throw new SqlUnsupportedError('a Top-N without ORDER BY in its OVER', over.position, text);
  const limit = Math.min(...limits);
  const first = Math.max(1, ...firsts);
  if (limit < first) throw new SqlUnsupportedError(`a Top-N that keeps no rank (${rankName} from ${first} to ${limit})`, select.where?.position ?? select.position, text);
  const rankSelected = select.items.some(
    ({ expression }) => expression.kind === 'star' || (expression.kind === 'column' && expression.name.toLowerCase() === rankName),
  );
  return { inner, rankItem, over, first, limit, rankSelected, where };
}

/**
 * Ranks the input's rows per partition, as Flink's append-only Rank and Deduplicate do: the
 * input's fields and the rank (`RANK_COLUMN`, hidden), with the changes that keep ranks 1 to N.
 *
 * - **Deduplication** (N = 1 by the time attribute, the rank not selected): each partition's
 *   first row (ascending), emitted once the watermark passes its time and never changed, so
 *   insert-only and still timed by its rowtime; or its last (descending, a later row winning a
 *   tie), +I and then -U/+U.
 * - **Top-N** with the rank selected: a row entering at rank r moves every row from r on down
 *   one rank, an update (-U, +U) per rank that changes and +I for a rank filled the first time.
 * - **Top-N** without it: -D for the row that leaves the N, +I for the row that enters; keyed
 *   by the partition when N = 1.
 *
 * Rows of equal order rank in their arrival order. Each partition keeps its N rows in keyed
 * state, until `table.exec.state.ttl` expires them.
 */
export function planRank(input: PlannedRelation, ranking: RankSpec, context: PlanContext, text: string): PlannedRelation {
  const { over, first, limit, rankSelected, sortLimit = false } = ranking;
  const { scope, orders, compare, keyOf } = rankOrder(input, ranking, context, text);
  const [firstOrder] = orders;
  const byTime =
    orders.length === 1 && firstOrder?.expression.kind === 'column' && resolveField(scope, firstOrder.expression.name, firstOrder.expression.table, firstOrder.expression.position) === input.rowtime;
  const deduplicate = limit === 1 && !rankSelected && byTime && !sortLimit;
  // As Flink's: ranks from 1 without the rank change as rows enter and leave; otherwise each rank's row is updated.
  const perRank = rankSelected || first > 1;
  const width = input.fields.length;
  const descriptor = expiring(new ValueStateDescriptor<Row[]>('top-rows'), context);
  const keyed = input.stream.keyBy((row) => (over.partitionBy.length === 0 ? '' : keyOf(row))).withState((state) => state.getState(descriptor));
  const strategy = !deduplicate ? 'top-n' : orders.some((o) => o.descending) ? 'keep-last' : 'keep-first';
  const time = input.rowtime as number;
  const ranked =
    strategy === 'keep-first'
      ? // Insert-only, as Flink's: the earliest row is final once the watermark passes its time; a
        // row before the watermark is late, and dropped. The state is [] once emitted.
        keyed.process<Row>({
          processElement(row, { state, timerService }) {
            const kept = state.value();
            const at = row[time] as number;
            if (kept?.length === 0 || at < timerService().currentWatermark()) return;
            const [earliest] = kept ?? [];
            if (earliest && compare(row, earliest) >= 0) return;
            state.update([row]);
            timerService().registerEventTimeTimer(at);
          },
          onTimer(timestamp, { state }, out) {
            const [earliest] = state.value() ?? [];
            if (!earliest || earliest[time] !== timestamp) return;
            out.collect(earliest);
            state.update([]);
          },
        })
      : keyed.process<Row>({
          processElement(row, { state }, out) {
            const emit = (changed: Row, rank: SqlValue, kind: string) => out.collect([...changed, rank, kind]);
            const rows = state.value() ?? [];
            if (strategy === 'keep-last') {
              // A later row replaces the kept one, and so does a row of the same time.
              const [kept] = rows;
              if (kept && compare(row, kept) > 0) return;
              if (kept) {
                emit(kept, null, '-U');
                emit(row, null, '+U');
              } else emit(row, null, '+I');
              state.update([row]);
              return;
            }
            const at = rows.findIndex((kept) => compare(row, kept) < 0);
            const rank = at < 0 ? rows.length : at;
            if (rank >= limit) return;
            const next = [...rows.slice(0, rank), row, ...rows.slice(rank)];
            const dropped = next.length > limit ? next.pop() : undefined;
            state.update(next);
            if (!perRank) {
              if (dropped) emit(dropped, null, '-D');
              emit(row, null, '+I');
              return;
            }
            for (let i = Math.max(rank, first - 1); i < next.length; i++) {
              const old = rows[i];
              if (old) emit(old, rankSelected ? i + 1 : null, '-U');
              emit(next[i] as Row, rankSelected ? i + 1 : null, old ? '+U' : '+I');
            }
          },
        });
  const partitionColumns = partitionColumnsOf(over, scope);
  const keys = partitionColumns.includes(-1) ? undefined : partitionColumns;
  const producer = deduplicate ? 'the deduplication (ROW_NUMBER() <= 1)' : sortLimit ? `ORDER BY … LIMIT ${limit}` : `the Top-N (ROW_NUMBER() <= ${limit})`;
  const updating =
    strategy === 'keep-first'
      ? undefined
      : strategy === 'keep-last'
        ? { keys: keys ?? [], producer, versionTime: time }
        : rankSelected
          ? { keys: keys ? [...keys, width] : [], producer }
          : perRank
            ? // A partition's row of one kept rank is its key's row when only one rank is kept.
              { keys: first === limit && keys ? keys : [], producer }
            : // With N = 1 a partition holds one row: its key is the partition's, as Flink's upsert key.
              { keys: limit === 1 && keys ? keys : [], producer, kinds: '+I, -D' };
  const kept = strategy === 'keep-first' ? input.fields : input.fields.map((f) => ({ ...f, type: plainTime(f.type) }));
  const fields: Field[] = [...kept, { name: RANK_COLUMN, type: { ...BIGINT, nullable: false }, hidden: true }];
  const order = orderList(orders);
  const partitionedBy = partitionList(partitionColumns, input.fields);
  const plan = deduplicate
    ? `Deduplicate(keep=[${strategy === 'keep-last' ? 'LastRow' : 'FirstRow'}], key=[${partitionedBy}], order=[ROWTIME], state=[the kept row per key])`
    : sortLimit
      ? `SortLimit(orderBy=[${order}], offset=[0], fetch=[${limit}], strategy=[AppendOnlyTopNStrategy], state=[the first ${limit} rows])`
      : `Rank(strategy=[AppendOnlyTopNStrategy], rankRange=[rankStart=${first}, rankEnd=${limit}], partitionBy=[${partitionedBy}], orderBy=[${order}], select=[${columnList(input.fields)}${rankSelected ? ', rank' : ''}], state=[the top ${limit} rows per key])`;
  const relation: PlannedRelation = { stream: ranked, fields, rowtime: strategy === 'keep-first' ? input.rowtime : undefined, ...(updating ? { updating } : {}) };
  sqlOperator(ranked, context, deduplicate ? 'deduplicate' : 'rank', plan, changelogMode(relation));
  return relation;
}

/**
 * A Top-N over an updating input (a GROUP BY's result, say), as Flink's RetractableTopNFunction
 * runs it: each partition keeps every row it holds, in order, since a row that leaves the N (its
 * -U or -D) lets the next one in. A change emits -D for each row that leaves the N and +I for
 * each that enters; with the rank selected, or ranks not from 1, an update (-U, +U) of each kept
 * rank whose row changed, +I for a rank filled and -D for one emptied. Rows of equal order rank
 * in their arrival order; a retraction removes the first row equal to it.
 */
export function planRetractableRank(input: PlannedRelation, ranking: Ranking, context: PlanContext, text: string): PlannedRelation {
  const { over, first, limit, rankSelected } = ranking;
  const perRank = rankSelected || first > 1;
  const { scope, orders, compare, keyOf } = rankOrder(input, ranking, context, text);
  const width = input.fields.length;
  const descriptor = expiring(new ValueStateDescriptor<Row[]>('ranked-rows'), context);
  const ranked = input.stream
    .keyBy((row) => (over.partitionBy.length === 0 ? '' : keyOf(row)))
    .withState((state) => state.getState(descriptor))
    .process<Row>({
      processElement(change, { state }, out) {
        const row = change.slice(0, width);
        const rows = state.value() ?? [];
        const before = rows.slice(0, limit);
        if (change[width] === '-U' || change[width] === '-D') {
          const text = JSON.stringify(row);
          const at = rows.findIndex((kept) => JSON.stringify(kept) === text);
          if (at < 0) return;
          rows.splice(at, 1);
        } else {
          const at = rows.findIndex((kept) => compare(row, kept) < 0);
          rows.splice(at < 0 ? rows.length : at, 0, row);
        }
        state.update(rows);
        const after = rows.slice(0, limit);
        if (!perRank) {
          for (const left of before) if (!after.includes(left)) out.collect([...left, null, '-D']);
          for (const entered of after) if (!before.includes(entered)) out.collect([...entered, null, '+I']);
          return;
        }
        for (let i = first - 1; i < limit; i++) {
          const [was, is] = [before[i], after[i]];
          const rank = rankSelected ? i + 1 : null;
          if (was === is) continue;
          if (was) out.collect([...was, rank, is ? '-U' : '-D']);
          if (is) out.collect([...is, rank, was ? '+U' : '+I']);
        }
      },
    });
  const keys = partitionColumnsOf(over, scope);
  const producer = `the Top-N (ROW_NUMBER() <= ${limit})`;
  const fields: Field[] = [...input.fields.map((f) => ({ ...f, type: plainTime(f.type) })), { name: RANK_COLUMN, type: { ...BIGINT, nullable: false }, hidden: true }];
  const relation: PlannedRelation = {
    stream: ranked,
    fields,
    rowtime: undefined,
    updating: rankSelected
      ? { keys: keys.includes(-1) ? [] : [...keys, width], producer, kinds: '+I, -U, +U, -D' }
      : { keys: first === limit && !keys.includes(-1) ? keys : [], producer, kinds: perRank ? '+I, -U, +U, -D' : '+I, -D' },
  };
  const plan = `Rank(strategy=[RetractStrategy], rankRange=[rankStart=${first}, rankEnd=${limit}], partitionBy=[${partitionList(keys, input.fields)}], orderBy=[${orderList(orders)}], select=[${columnList(input.fields)}${rankSelected ? ', rank' : ''}], state=[every row per key])`;
  sqlOperator(ranked, context, 'rank', plan, changelogMode(relation));
  return relation;
}

type RankOrder = ReturnType<typeof rankOrder>;

/**
 * What {@link planRank} ranks by: a Top-N's, or ORDER BY … LIMIT's (`sortLimit`), which Flink
 * runs as a Top-N of one partition, never as a deduplication.
 */
export type RankSpec = Pick<Ranking, 'over' | 'first' | 'limit' | 'rankSelected'> & { readonly sortLimit?: boolean };

/** A ranking's partition key and its row order over the input's rows. */
function rankOrder(input: PlannedRelation, { over }: RankSpec, context: PlanContext, text: string) {
  const scope = scopeOf(input.fields, context, text);
  const partitions = over.partitionBy.map((expression) => compileExpression(expression, scope));
  const orders = over.orderBy.map(({ expression, descending }) => ({ compiled: compileExpression(expression, scope), descending, expression }));
  const { keyOf } = groupKey(partitions.map((p) => p.evaluate));
  return { scope, orders, compare: rowOrder(orders), keyOf };
}

/** Rows compared by `orders` in turn, NULL the lowest value as Flink collates it: first ascending, last descending. */
export function rowOrder(orders: readonly { readonly compiled: Compiled; readonly descending: boolean }[]): (a: Row, b: Row) => number {
  return (a, b) => {
    for (const { compiled, descending } of orders) {
      const x = compiled.evaluate(a);
      const y = compiled.evaluate(b);
      const order = x === null || y === null ? Number(y === null) - Number(x === null) : compareValues(x, y, compiled.type);
      if (order !== 0) return descending ? -order : order;
    }
    return 0;
  };
}

function partitionColumnsOf(over: OverClause, scope: RankOrder['scope']): number[] {
  return over.partitionBy.map((expression) => (expression.kind === 'column' ? resolveField(scope, expression.name, expression.table, expression.position) : -1));
}

function orderList(orders: RankOrder['orders']): string {
  return orders.map(({ expression, descending }) => `${expression.kind === 'column' ? expression.name : 'an expression'} ${descending ? 'DESC' : 'ASC'}`).join(', ');
}

function partitionList(partitionColumns: readonly number[], fields: readonly Field[]): string {
  return columnList(partitionColumns.map((at, i) => ({ name: at < 0 ? `expression ${i + 1}` : (fields[at] as Field).name, type: BIGINT })));
}

/**
 * A Top-N partitioned by a window's start and end, as Flink's WindowRank and WindowDeduplicate
 * run one: each partition's rows are kept until the watermark passes the window's last
 * millisecond (`windowEnd` is the column of the window's end), then its first N are emitted
 * once, insert-only, with their ranks when the query selects them, and its state cleared.
 *
 * - Ordered by a time attribute with N = 1 and the rank not selected, a window deduplication:
 *   the earliest row (ascending; of equal times, the first to come) or the latest (descending;
 *   of equal times, the last to come).
 * - Otherwise rows of equal order rank in their arrival order.
 *
 * A window table function's row behind the watermark is late, and dropped, as in Flink.
 */
export function planWindowRank(input: PlannedRelation, ranking: Ranking, windowEnd: WindowColumn, context: PlanContext, text: string): PlannedRelation {
  const { over, first, limit, rankSelected } = ranking;
  const { scope, orders, compare, keyOf } = rankOrder(input, ranking, context, text);
  const [firstOrder] = orders;
  const deduplicate = limit === 1 && !rankSelected && orders.length === 1 && firstOrder !== undefined && isTemporal(firstOrder.compiled.type) && firstOrder.compiled.type.rowtime === true;
  const keepLast = deduplicate && firstOrder.descending;
  const descriptor = expiring(new ValueStateDescriptor<Row[]>('window-top-rows'), context);
  const ranked = input.stream
    .keyBy((row) => keyOf(row))
    .withState((state) => state.getState(descriptor))
    .process<Row>({
      processElement(row, { state, timerService }) {
        const lastMillisecond = windowStillOpen(row, windowEnd, timerService().currentWatermark());
        if (lastMillisecond === undefined) return;
        const rows = state.value() ?? [];
        if (rows.length === 0) timerService().registerEventTimeTimer(lastMillisecond);
        // Deduplicating by time, the later of equal rows wins when keeping the last.
        const at = rows.findIndex((kept) => (keepLast ? compare(row, kept) <= 0 : compare(row, kept) < 0));
        const rank = at < 0 ? rows.length : at;
        if (rank >= limit) return;
        state.update([...rows.slice(0, rank), row, ...rows.slice(rank)].slice(0, limit));
      },
      onTimer(_timestamp, { state }, out) {
        (state.value() ?? []).forEach((row, i) => {
          if (i + 1 >= first) out.collect([...row, rankSelected ? i + 1 : null]);
        });
        state.clear();
      },
    });
  const fields: Field[] = [...emittedAtWindowEnd(input.fields), { name: RANK_COLUMN, type: { ...BIGINT, nullable: false }, hidden: true }];
  const partitionedBy = partitionList(partitionColumnsOf(over, scope), input.fields);
  const plan = deduplicate
    ? `WindowDeduplicate(keep=[${keepLast ? 'LastRow' : 'FirstRow'}], partitionBy=[${partitionedBy}], order=[${orderList(orders)}])`
    : `WindowRank(rankType=[ROW_NUMBER], rankRange=[rankStart=${first}, rankEnd=${limit}], partitionBy=[${partitionedBy}], orderBy=[${orderList(orders)}], select=[${columnList(input.fields)}${rankSelected ? ', rank' : ''}])`;
  const relation: PlannedRelation = { stream: ranked, fields, rowtime: input.rowtime };
  sqlOperator(ranked, context, deduplicate ? 'window-deduplicate' : 'window-rank', plan, 'insert-only');
  return relation;
}
