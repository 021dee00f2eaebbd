import { ValueStateDescriptor } from '../api/state.js';
import { emittedAtWindowEnd, windowStillOpen, type Compiled, type Field, type Row, type WindowColumn } from './compiled.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import type { SqlValue } from './types.js';

/** What a window join needs of the regular join's planning: each input's key and window end, the pair's condition, the outer inputs. */
export interface WindowJoinParts {
  readonly inputs: readonly [PlannedRelation, PlannedRelation];
  readonly keyOf: readonly [(row: Row) => SqlValue, (row: Row) => SqlValue];
  /** Whether a row's join key holds a NULL, which SQL's equality never matches. */
  readonly nullKey: readonly [(row: Row) => boolean, (row: Row) => boolean];
  /** Each input's window_end column, its position in that input's row. */
  readonly ends: readonly [WindowColumn, WindowColumn];
  /** Every condition of ON that is not an equality of keys. */
  readonly matches: Compiled | undefined;
  /** Whether each input is an outer one: its rows without a match are emitted padded with NULLs. */
  readonly outer: readonly [boolean, boolean];
  readonly joinType: string;
  readonly fields: readonly Field[];
  readonly equalities: string;
}

/**
 * Flink's window join: a join whose equalities hold both inputs' window_start and window_end
 * (of window aggregations or window table functions). Each input's rows of a key and window are
 * kept until the watermark passes the window's last millisecond; then the window's pairs are
 * emitted once, insert-only, an outer input's rows without a partner padded with NULLs, and the
 * window's rows dropped. A window table function's row behind the watermark is late, and dropped.
 */
export function planWindowJoin(parts: WindowJoinParts, context: PlanContext): PlannedRelation {
  const { inputs, keyOf, nullKey, ends, matches, outer, fields } = parts;
  const padding = [inputs[0].fields.map(() => null), inputs[1].fields.map(() => null)] as const;
  const descriptor = (name: string) => expiring(new ValueStateDescriptor<Row[]>(name), context);
  const joined = sidedUnion(inputs[0].stream, inputs[1].stream)
    .keyBy(({ side, row }) => keyOf[side](row))
    .withState((state) => [state.getState(descriptor('left-window-rows')), state.getState(descriptor('right-window-rows'))] as const)
    .process<Row>({
      processElement({ side, row }, { state, timerService }) {
        const end = ends[side];
        const lastMillisecond = windowStillOpen(row, end, timerService().currentWatermark());
        if (lastMillisecond === undefined) return;
        state[side].update([...(state[side].value() ?? []), row]);
        timerService().registerEventTimeTimer(lastMillisecond);
      },
      onTimer(_timestamp, { state }, out) {
        const [lefts, rights] = [state[0].value() ?? [], state[1].value() ?? []];
        const rightMatched = rights.map(() => false);
        for (const left of lefts) {
          const partners = nullKey[0](left) ? [] : rights.flatMap((right, i) => (nullKey[1](right) || (matches && matches.evaluate([...left, ...right]) !== true) ? [] : [i]));
          for (const i of partners) {
            out.collect([...left, ...(rights[i] as Row)]);
            rightMatched[i] = true;
          }
          if (outer[0] && partners.length === 0) out.collect([...left, ...padding[1]]);
        }
        if (outer[1]) rights.forEach((right, i) => (rightMatched[i] ? undefined : out.collect([...padding[0], ...right])));
        state[0].clear();
        state[1].clear();
      },
    });
  const relation: PlannedRelation = { stream: joined, fields: emittedAtWindowEnd(fields), rowtime: undefined };
  sqlOperator(
    joined,
    context,
    'window-join',
    `WindowJoin(joinType=[${parts.joinType}], where=[${parts.equalities}], select=[${columnList(fields)}], state=[each input's rows by join key and window, until the watermark passes the window])`,
    changelogMode(relation),
  );
  return relation;
}
