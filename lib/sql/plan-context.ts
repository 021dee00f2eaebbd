import type { DataStream, SingleOutputStreamOperator } from '../api/datastream.js';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import { StateTtlConfig, type AnyStateDescriptor } from '../api/state.js';
import type { Select } from './ast.js';
import type { ConnectorTable, ViewTable } from './catalog.js';
import type { Compiled, Field, Row, Scope } from './compiled.js';
import { SqlUnsupportedError } from './errors.js';
import type { PlannedRelation } from './kafka-table.js';
import type { SqlSession } from './session.js';
import type { SqlValue } from './types.js';

/** A table a query can name: a CREATE TABLE, a view, or a stream registered with the Table API. */
export type CatalogTable = ConnectorTable | ViewTable | { readonly kind: 'stream'; readonly name: string; readonly relation: PlannedRelation };

export interface PlanContext {
  readonly env: StreamExecutionEnvironment;
  readonly session: SqlSession;
  readonly tables: ReadonlyMap<string, CatalogTable>;
  /** Each source table is read once per pipeline, however many queries name it. */
  readonly sources: Map<string, PlannedRelation>;
  /** Numbers the operators, whose names name their state. */
  readonly counter: { next: number };
}

function operatorName(context: PlanContext, kind: string): string {
  context.counter.next++;
  return `${kind}-${context.counter.next}`;
}

/** The changelog a relation's rows make, as `explain` names it. */
export function changelogMode(relation: PlannedRelation): string {
  return relation.updating ? `retract: ${relation.updating.kinds ?? '+I, -U, +U'}` : 'insert-only';
}

/** Names a SQL operator, whose name names its state, and says for `explain` what it plans and what changelog it gives. */
export function sqlOperator<T>(operator: SingleOutputStreamOperator<T>, context: PlanContext, kind: string, plan: string, mode: string): SingleOutputStreamOperator<T> {
  operator.name(operatorName(context, kind));
  context.env.describeTransformation(operator.transformation, `${plan} [${mode}]`);
  return operator;
}

/** The names of a row's columns, as a SQL operator's plan lists them. */
export function columnList(fields: readonly Field[]): string {
  return fields.map((f) => f.name).join(', ');
}

export function scopeOf(fields: readonly Field[], context: PlanContext, text: string): Scope {
  return { fields, text, zone: context.session.zone, functions: context.session.functions };
}

/** An updating relation's input, refused where Sluice does not consume updates yet. */
export function appendOnly(relation: PlannedRelation, consumer: string, position: Select['position'], text: string): PlannedRelation {
  if (relation.updating) throw new SqlUnsupportedError(`${consumer} over an updating result (of ${relation.updating.producer})`, position, text);
  return relation;
}

/**
 * A grouping key: one key is itself, as a keyBy's would be, so that a topic keyed by it is
 * aggregated in place; several are a JSON array. `keyValues` gives the keys back from it.
 */
export function groupKey(evaluators: readonly ((row: Row) => SqlValue)[]): { keyOf: (row: Row) => SqlValue; keyValues: (key: SqlValue) => Row } {
  const [single] = evaluators;
  if (evaluators.length === 1 && single) return { keyOf: single, keyValues: (key) => [key] };
  return { keyOf: (row) => JSON.stringify(evaluators.map((evaluate) => evaluate(row))), keyValues: (key) => JSON.parse(key as string) as Row };
}

/** A SQL operator's state descriptor, expiring after `table.exec.state.ttl` if the session sets it. */
export function expiring<D extends AnyStateDescriptor>(descriptor: D, context: PlanContext): D {
  const ttl = context.session.stateTtl;
  if (ttl !== undefined) descriptor.enableTimeToLive(StateTtlConfig.newBuilder(ttl).build());
  return descriptor;
}

/** A relation's rows that meet a WHERE condition (a Calc), or all of them without one; a changelog's keep their kinds. */
export function filtered(relation: PlannedRelation, condition: Compiled | undefined, context: PlanContext): DataStream<Row> {
  if (!condition) return relation.stream;
  return sqlOperator(relation.stream.filter((row) => condition.evaluate(row) === true), context, 'where', 'Calc(where)', changelogMode(relation));
}

/** A row on its way to an operator of several inputs, with the index of the input it came from. */
export interface SidedRow<Side extends number = number> {
  readonly side: Side;
  readonly row: Row;
}

/** The inputs' rows in one stream, each with its input's index: a join's left rows as side 0, its right as 1. */
export function sidedUnion(left: DataStream<Row>, right: DataStream<Row>): DataStream<SidedRow<0 | 1>>;
export function sidedUnion(...inputs: DataStream<Row>[]): DataStream<SidedRow>;
export function sidedUnion(...inputs: DataStream<Row>[]): DataStream<SidedRow> | DataStream<SidedRow<0 | 1>> {
  const [head, ...rest] = inputs.map((stream, side) => stream.map((row): SidedRow => ({ side, row })));
  if (!head) throw new Error('sidedUnion needs an input');
  return rest.length === 0 ? head : head.union(...rest);
}
