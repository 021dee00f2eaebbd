import { MapStateDescriptor, ValueStateDescriptor } from '../api/state.js';
import type { Compiled, Field, Row } from './compiled.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import type { SqlValue } from './types.js';

/** What a temporal join needs of the regular join's planning: each input's key, the probe's time and the versions' time, the pair's condition. */
export interface TemporalJoinParts {
  /** The probe side (left) and the versioned table (right). */
  readonly inputs: readonly [PlannedRelation, PlannedRelation];
  readonly keyOf: readonly [(row: Row) => SqlValue, (row: Row) => SqlValue];
  /** Whether a probe row's join key holds a NULL, which SQL's equality never matches. */
  readonly nullKey: (row: Row) => boolean;
  /** The probe's time attribute and the versioned table's version time, each a column of its own input. */
  readonly times: readonly [number, number];
  /** Every condition of ON that is not an equality of keys. */
  readonly matches: Compiled | undefined;
  /** LEFT: a probe row without a version in effect is emitted padded with NULLs. */
  readonly outer: boolean;
  readonly fields: readonly Field[];
  readonly equalities: string;
}

/**
 * Flink's event-time temporal join (`JOIN versioned FOR SYSTEM_TIME AS OF probe.time`): each
 * probe row waits until the watermark passes its time, then is joined with the version of its
 * key in effect at that time, the latest whose time is not after it (none if that version is a
 * delete). Probe rows are emitted in their arrival order; insert-only. Versions older than the
 * one in effect at the watermark are dropped, as no probe row can read them any more. The
 * versioned table's -U rows are not versions: its +U rows replace them.
 */
export function planTemporalJoin(parts: TemporalJoinParts, context: PlanContext): PlannedRelation {
  const { inputs, keyOf, nullKey, times, matches, outer, fields } = parts;
  const [probeWidth, versionWidth] = [inputs[0].fields.length, inputs[1].fields.length];
  const padding = inputs[1].fields.map(() => null);
  const joined = sidedUnion(inputs[0].stream, inputs[1].stream)
    .keyBy(({ side, row }) => keyOf[side](row))
    .withState((state) => ({
      probes: state.getState(expiring(new ValueStateDescriptor<Row[]>('probe-rows'), context)),
      versions: state.getMapState(expiring(new MapStateDescriptor<string, Row>('versions'), context)),
    }))
    .process<Row>({
      processElement({ side, row }, { state, timerService }, out) {
        if (side === 0) {
          if (nullKey(row)) {
            if (outer) out.collect([...row, ...padding]);
            return;
          }
          state.probes.update([...(state.probes.value() ?? []), row]);
          timerService().registerEventTimeTimer(row[times[0]] as number);
          return;
        }
        const kind = row[versionWidth];
        const time = row[times[1]];
        if (kind === '-U' || typeof time !== 'number') return;
        // One version per time, as Flink keys them: a later change of the same time replaces it.
        state.versions.put(String(time), row);
        timerService().registerEventTimeTimer(time);
      },
      onTimer(_timestamp, { state, timerService }, out) {
        const watermark = timerService().currentWatermark();
        const versions = state.versions
          .entries()
          .map(([time, row]) => ({ time: Number(time), row }))
          .sort((a, b) => a.time - b.time);
        const inEffect = (at: number) => versions.findLast((version) => version.time <= at);
        const waiting: Row[] = [];
        for (const probe of state.probes.value() ?? []) {
          const at = probe[times[0]] as number;
          if (at > watermark) {
            waiting.push(probe);
            continue;
          }
          const version = inEffect(at)?.row;
          const pair = version && version[versionWidth] !== '-D' ? [...probe.slice(0, probeWidth), ...version.slice(0, versionWidth)] : undefined;
          if (pair && (!matches || matches.evaluate(pair) === true)) out.collect(pair);
          else if (outer) out.collect([...probe, ...padding]);
        }
        if (waiting.length > 0) state.probes.update(waiting);
        else state.probes.clear();
        const kept = inEffect(watermark);
        for (const { time } of versions) {
          if (kept && time < kept.time) state.versions.remove(String(time));
        }
      },
    });
  const probeTime = inputs[0].rowtime;
  // The probe's time attribute stays one, as in Flink: a row is emitted once the watermark passes it.
  const joinedFields = fields.map((field, i) => (i === probeTime ? (inputs[0].fields[i] as Field) : field));
  const relation: PlannedRelation = { stream: joined, fields: joinedFields, rowtime: probeTime };
  sqlOperator(
    joined,
    context,
    'temporal-join',
    `TemporalJoin(joinType=[${outer ? 'LeftOuterJoin' : 'InnerJoin'}], where=[${parts.equalities}], select=[${columnList(fields)}], state=[each key's probe rows until the watermark passes them, and its versions from the one in effect at the watermark on])`,
    changelogMode(relation),
  );
  return relation;
}
