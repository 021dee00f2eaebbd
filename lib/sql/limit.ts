import { ValueStateDescriptor } from '../api/state.js';
import type { SortItem } from './ast.js';
import type { Row } from './compiled.js';
import type { PlannedRelation } from './kafka-table.js';
import { appendOnly, changelogMode, sqlOperator, type PlanContext } from './plan-context.js';
import { planRank } from './ranking.js';
import { plainTime } from './types.js';

/**
 * LIMIT on a stream, as Flink runs it at parallelism 1, over an insert-only input:
 *
 * - **LIMIT n** alone: the first n rows in the order they arrive, as inserts; every row after
 *   them is dropped.
 * - **ORDER BY … LIMIT n**: the n first rows by the order, kept up to date as a Top-N of one
 *   partition: +I for a row that enters them, -D for the row it pushes out (rows of equal order
 *   in their arrival order). An updating result, which an upsert sink or `toChangelogStream` takes.
 *
 * OFFSET m skips the first m rows of either: the rows kept are the (m+1)th to the (m+n)th.
 *
 * Either way the rows lose their time attribute, as Flink's do.
 */
export function planLimit(
  input: PlannedRelation,
  orderBy: readonly SortItem[],
  { limit, offset }: { readonly limit: number; readonly offset: number },
  position: SortItem['expression']['position'],
  context: PlanContext,
  text: string,
): PlannedRelation {
  const rows = appendOnly(input, 'LIMIT', position, text);
  const fields = rows.fields.map((field) => ({ ...field, type: plainTime(field.type) }));
  if (orderBy.length > 0) {
    const ranked = planRank(rows, { over: { partitionBy: [], orderBy, frame: undefined, position }, first: offset + 1, limit: offset + limit, rankSelected: false, sortLimit: true }, context, text);
    // Without its rank column, which ORDER BY … LIMIT does not select; each row's kind follows its columns.
    const width = fields.length;
    const stream = ranked.stream.map((row) => [...row.slice(0, width), row[width + 1] ?? null]);
    return { ...ranked, stream, fields };
  }
  // Rows seen, offset's included: under the name it had before OFFSET ran, which restored state holds.
  const emitted = new ValueStateDescriptor<number>('rows-emitted', 0);
  const first = rows.stream
    .keyBy(() => '')
    .withState((state) => state.getState(emitted))
    .process<Row>({
      processElement(row, { state }, out) {
        const count = state.value() ?? 0;
        if (count >= offset + limit) return;
        state.update(count + 1);
        if (count >= offset) out.collect(row);
      },
    });
  const relation: PlannedRelation = { stream: first, fields, rowtime: undefined };
  sqlOperator(first, context, 'limit', `Limit(offset=[${offset}], fetch=[${limit}], state=[how many rows it has seen, up to ${offset + limit}])`, changelogMode(relation));
  return relation;
}
