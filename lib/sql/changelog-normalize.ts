import { ValueStateDescriptor } from '../api/state.js';
import type { Row } from './compiled.js';
import type { PlannedRelation } from './kafka-table.js';
import { expiring, groupKey, sqlOperator, type PlanContext } from './plan-context.js';

/**
 * An upsert source's changes as a changelog, as Flink's ChangelogNormalize makes one: keyed by
 * the primary key, with each key's last row in state. An upsert of a new key is +I; of a known
 * key, -U of the row it replaces and +U of itself, or nothing when it equals that row (unless
 * `table.exec.state.ttl` may have expired the row, as in Flink); a delete of a known key is -D of
 * its row, and of an unknown key nothing.
 */
export function normalizedChangelog(source: PlannedRelation, context: PlanContext): PlannedRelation {
  const updating = source.updating as NonNullable<PlannedRelation['updating']>;
  const width = source.fields.length;
  const { keyOf } = groupKey(updating.keys.map((at) => (row: Row) => row[at] ?? null));
  const expires = context.session.stateTtl !== undefined;
  const last = expiring(new ValueStateDescriptor<Row>('last-row'), context);
  const normalized = source.stream
    .keyBy((row) => keyOf(row))
    .withState((state) => state.getState(last))
    .process<Row>({
      processElement(change, { state }, out) {
        const row = change.slice(0, width);
        const before = state.value();
        if (change[width] === '-D') {
          if (before) out.collect([...before, '-D']);
          state.clear();
          return;
        }
        if (!before) out.collect([...row, '+I']);
        else if (expires || JSON.stringify(before) !== JSON.stringify(row)) {
          out.collect([...before, '-U']);
          out.collect([...row, '+U']);
        } else return;
        state.update(row);
      },
    });
  const relation: PlannedRelation = { ...source, stream: normalized, updating: { keys: updating.keys, producer: updating.producer, kinds: '+I, -U, +U, -D' } };
  sqlOperator(normalized, context, 'changelog-normalize', `ChangelogNormalize(key=[${updating.keys.map((at) => source.fields[at]?.name ?? '').join(', ')}], state=[each key's last row])`, 'retract: +I, -U, +U, -D');
  return relation;
}
