import type { Expression, Relation } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { conjunction } from './expressions.js';
import { planRegularJoin } from './joins.js';
import type { PlannedRelation } from './kafka-table.js';
import type { PlanContext } from './plan-context.js';
import { withNullable } from './types.js';

type JoinRelation = Extract<Relation, { kind: 'join' }>;

/** An input's column that `*` and unqualified names reach. */
function visible(field: Field): boolean {
  return !field.hidden && !field.qualifiedOnly;
}

/**
 * JOIN … USING (c, …) and NATURAL JOIN (USING every column both inputs have), as Flink (Calcite)
 * reads them: the join ON each column's equality, whose rows begin with one column per USING
 * name — the left input's value, the right's for a RIGHT JOIN, the first that is not NULL for a
 * FULL one — which `*` and the unqualified name reach; each input's own column stays reachable
 * by its table's name. `*` lists the USING columns, then the left's others, then the right's.
 */
export function planUsingJoin(
  join: JoinRelation,
  inputs: { readonly left: PlannedRelation; readonly right: PlannedRelation },
  where: Expression | undefined,
  context: PlanContext,
  text: string,
): PlannedRelation {
  const names =
    join.using === 'natural'
      ? inputs.left.fields.filter(visible).map((f) => f.name).filter((name) => inputs.right.fields.some((f) => visible(f) && f.name.toLowerCase() === name.toLowerCase()))
      : (join.using ?? []);
  if (names.length === 0) throw new SqlUnsupportedError('a NATURAL JOIN of inputs without a column in common (a cross join)', join.position, text);
  // Each USING column of each input, with a qualifier that names it alone in the ON condition.
  const columnOf = (input: PlannedRelation, name: string, side: string, synthetic: string) => {
    const matches = input.fields.flatMap((f, i) => (visible(f) && f.name.toLowerCase() === name.toLowerCase() ? [i] : []));
    const [index] = matches;
    if (index === undefined || matches.length > 1) {
      throw new SqlError(`USING column '${name}' ${index === undefined ? 'is not a column of' : 'is ambiguous in'} the ${side} input`, join.position, text);
    }
    const field = input.fields[index] as Field;
    return { index, field: { ...field, qualifier: field.qualifier ?? synthetic } };
  };
  const pairs = names.map((name, i) => [columnOf(inputs.left, name, 'left', `$using-left-${i}`), columnOf(inputs.right, name, 'right', `$using-right-${i}`)] as const);
  const requalified = (input: PlannedRelation, side: 0 | 1): PlannedRelation => ({
    ...input,
    fields: input.fields.map((f, i) => pairs.find((pair) => pair[side].index === i)?.[side].field ?? f),
  });
  const left = requalified(inputs.left, 0);
  const right = requalified(inputs.right, 1);
  const column = (field: Field): Expression => ({ kind: 'column', table: field.qualifier, name: field.name, position: join.position });
  const condition = conjunction(pairs.map(([l, r]) => ({ kind: 'binary', operator: '=', left: column(l.field), right: column(r.field), position: join.position })));
  const joined = planRegularJoin({ ...join, condition }, { left, right }, where, context, text);
  const width = left.fields.length;
  const positions = pairs.map(([l, r]) => [l.index, width + r.index] as const);
  const mergedValue =
    join.type === 'RIGHT'
      ? (row: Row, [, r]: readonly [number, number]) => row[r] ?? null
      : join.type === 'FULL'
        ? (row: Row, [l, r]: readonly [number, number]) => row[l] ?? row[r] ?? null
        : (row: Row, [l]: readonly [number, number]) => row[l] ?? null;
  const merged: Field[] = pairs.map(([l, r]) => {
    const type = join.type === 'RIGHT' ? (joined.fields[width + r.index] as Field).type : (joined.fields[l.index] as Field).type;
    return { name: l.field.name, type: join.type === 'FULL' ? withNullable(type, true) : type };
  });
  const sides = new Set(positions.flat());
  const shift = (index: number) => index + merged.length;
  return {
    stream: joined.stream.map((row) => [...positions.map((at) => mergedValue(row, at)), ...row]),
    fields: [...merged, ...joined.fields.map((f, i) => (sides.has(i) ? { ...f, qualifiedOnly: true } : f))],
    rowtime: joined.rowtime === undefined ? undefined : shift(joined.rowtime),
    ...(joined.updating
      ? {
          updating: {
            ...joined.updating,
            keys: joined.updating.keys.map(shift),
            ...(joined.updating.versionTime === undefined ? {} : { versionTime: shift(joined.updating.versionTime) }),
          },
        }
      : {}),
  };
}
