import type { DataStream } from '../api/datastream.js';
import { ValueStateDescriptor } from '../api/state.js';
import type { SetOperation } from './ast.js';
import type { Field, Row } from './compiled.js';
import { SqlError } from './errors.js';
import type { PlannedRelation } from './kafka-table.js';
import { changelogMode, columnList, expiring, groupKey, scopeOf, sidedUnion, sqlOperator, type PlanContext } from './plan-context.js';
import { commonType } from './type-rules.js';
import { plainTime } from './types.js';
import { widen } from './values.js';

function operatorName(operation: SetOperation): string {
  return `${operation.operator}${operation.all ? ' ALL' : ''}`;
}

/**
 * The inputs' rows widened to their common types, each as a change: its columns, then its RowKind
 * when `changes` (an insert-only input's rows as +I).
 */
function aligned(operation: SetOperation, inputs: readonly PlannedRelation[], changes: boolean, context: PlanContext, text: string) {
  const [first, ...others] = inputs as [PlannedRelation, ...PlannedRelation[]];
  const name = operatorName(operation);
  for (const other of others) {
    if (other.fields.length !== first.fields.length) {
      throw new SqlError(`${name}'s inputs have ${first.fields.length} and ${other.fields.length} columns; they need the same number`, operation.position, text);
    }
  }
  const scope = scopeOf(first.fields, context, text);
  const fields = first.fields.map((field, i): Field => ({
    name: field.name,
    type: commonType(
      inputs.map((input) => (input.fields[i] as Field).type),
      scope,
      operation.position,
      `${name}'s column ${i + 1}`,
    ),
  }));
  const width = fields.length;
  const streams = inputs.map((input) => {
    const cast = !input.fields.every((f, i) => f.type.kind === (fields[i] as Field).type.kind);
    const marked = changes && !input.updating;
    if (!cast && !marked) return input.stream;
    const values = (row: Row) => (cast ? row.slice(0, width).map((value, i) => widen(value, (input.fields[i] as Field).type, (fields[i] as Field).type)) : row.slice(0, width));
    const kind = (row: Row) => (input.updating ? [row[width] ?? null] : marked ? ['+I'] : []);
    return sqlOperator(
      input.stream.map((row) => [...values(row), ...kind(row)]),
      context,
      'union-cast',
      `Calc(${cast ? `cast to the ${name}'s types: ${columnList(fields)}` : 'each row an insert'})`,
      changelogMode(input),
    );
  });
  return { fields, streams: streams as [DataStream<Row>, ...DataStream<Row>[]] };
}

/**
 * UNION ALL: the inputs' rows in one stream, widened to common types. Over an updating input the
 * union is a changelog too, each insert-only input's rows as +I; its rows have no key.
 */
function planUnionAll(operation: SetOperation, inputs: readonly PlannedRelation[], context: PlanContext, text: string): PlannedRelation {
  const updating = inputs.filter((input) => input.updating);
  const { fields, streams } = aligned(operation, inputs, updating.length > 0, context, text);
  const [head, ...rest] = streams;
  const first = inputs[0] as PlannedRelation;
  const rowtime = updating.length === 0 && inputs.every((input) => input.rowtime === first.rowtime) ? first.rowtime : undefined;
  const kinds = updating.some((input) => input.updating?.kinds?.includes('-D')) ? '+I, -U, +U, -D' : undefined;
  const producer = `the UNION ALL of ${updating.map((input) => input.updating?.producer).join(' and ')}`;
  return {
    stream: rest.length === 0 ? head : head.union(...rest),
    fields,
    rowtime,
    ...(updating.length > 0 ? { updating: { keys: [], producer, ...(kinds ? { kinds } : {}) } } : {}),
  };
}

/**
 * How many copies of a row a set operation's result holds, given how many each input holds (the
 * first input's count first): UNION's if any input holds it, INTERSECT's as many as every input
 * holds, EXCEPT's as many as the first holds beyond the others; one at most when distinct.
 */
function copiesOf(operation: SetOperation): (counts: readonly number[]) => number {
  const { operator, all } = operation;
  if (operator === 'UNION') return (counts) => (counts.some((count) => count > 0) ? 1 : 0);
  if (operator === 'INTERSECT') return all ? (counts) => Math.min(...counts) : (counts) => (counts.every((count) => count > 0) ? 1 : 0);
  return (counts) => {
    const [first = 0, ...others] = counts;
    const beyond = others.reduce((left, count) => left - count, first);
    return all ? Math.max(beyond, 0) : first > 0 && others.every((count) => count === 0) ? 1 : 0;
  };
}

/**
 * UNION, INTERSECT and EXCEPT, with or without ALL (UNION ALL aside): the inputs keyed by the
 * whole row, NULLs equal to each other, and per distinct row how many copies each input holds.
 * Each change to those counts emits the difference it makes to the result's copies of the row:
 * +I for each copy gained, -D for each lost. Flink plans these as a GROUP BY of every column
 * (over a semi or anti join for INTERSECT and EXCEPT, or over counts for ALL), whose changelog
 * is an update too: the result is updating whatever the inputs are, and keeps no event time.
 */
function planCountingSetOperation(operation: SetOperation, inputs: readonly PlannedRelation[], context: PlanContext, text: string): PlannedRelation {
  const { fields, streams } = aligned(operation, inputs, true, context, text);
  const width = fields.length;
  const { keyOf } = groupKey(fields.map((_, i) => (row: Row) => row[i] ?? null));
  const copies = copiesOf(operation);
  const counted = sidedUnion(...streams)
    .keyBy(({ row }) => keyOf(row))
    .withState((state) => ({ counts: state.getState(expiring(new ValueStateDescriptor<number[]>('copies-per-input'), context)) }))
    .process<Row>({
      processElement({ side, row }, { state }, out) {
        const before = state.counts.value() ?? inputs.map(() => 0);
        const kind = row[width];
        const after = before.map((count, i) => (i !== side ? count : kind === '-U' || kind === '-D' ? Math.max(count - 1, 0) : count + 1));
        if (after.every((count) => count === 0)) state.counts.clear();
        else state.counts.update(after);
        const values = row.slice(0, width);
        const change = copies(after) - copies(before);
        for (let n = 0; n < Math.abs(change); n++) out.collect([...values, change > 0 ? '+I' : '-D']);
      },
    });
  const name = operatorName(operation);
  const relation: PlannedRelation = {
    stream: counted,
    fields: fields.map((field) => ({ ...field, type: plainTime(field.type) })),
    rowtime: undefined,
    updating: { keys: operation.all ? [] : fields.map((_, i) => i), producer: name, kinds: '+I, -D' },
  };
  sqlOperator(counted, context, 'set-operation', `${name}(state=[per distinct row, how many copies each input holds])`, changelogMode(relation));
  return relation;
}

/** Plans a set operation over its inputs, planned. */
export function planSetOperation(operation: SetOperation, inputs: readonly PlannedRelation[], context: PlanContext, text: string): PlannedRelation {
  return operation.operator === 'UNION' && operation.all ? planUnionAll(operation, inputs, context, text) : planCountingSetOperation(operation, inputs, context, text);
}
