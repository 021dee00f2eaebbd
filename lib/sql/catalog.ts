import type { ColumnDefinition, CreateTable, Expression, Query } from './ast.js';
import { resolveType } from './casts.js';
import { SqlError, SqlUnsupportedError, type SqlPosition } from './errors.js';
import type { Field } from './compiled.js';
import { BIGINT, INT, STRING, timestamp, typeName, type SqlType } from './types.js';

/** The Kafka connector's metadata columns Sluice reads (and, for `timestamp`, writes), with their types. */
export const KAFKA_METADATA: Readonly<Record<string, { readonly type: SqlType; readonly writable: boolean }>> = {
  topic: { type: STRING, writable: false },
  partition: { type: INT, writable: false },
  offset: { type: BIGINT, writable: false },
  timestamp: { type: timestamp('TIMESTAMP_LTZ', 3), writable: true },
  'timestamp-type': { type: STRING, writable: false },
};

/** A column of a CREATE TABLE with its resolved type (a computed column's comes from its expression, when the table is planned). */
export type TableColumn =
  | { readonly kind: 'physical'; readonly name: string; readonly type: SqlType }
  | { readonly kind: 'metadata'; readonly name: string; readonly type: SqlType; readonly key: string; readonly virtual: boolean }
  | { readonly kind: 'computed'; readonly name: string; readonly expression: Expression };

/** A table of CREATE TABLE: its columns, its watermark, and its connector's options. */
export interface ConnectorTable {
  readonly kind: 'connector';
  readonly name: string;
  readonly columns: readonly TableColumn[];
  readonly watermark: CreateTable['watermark'];
  readonly primaryKey: readonly string[] | undefined;
  readonly options: ReadonlyMap<string, string>;
  readonly position: SqlPosition;
  /** The statement's text, for errors found when the table is planned. */
  readonly text: string;
}

export interface ViewTable {
  readonly kind: 'view';
  readonly name: string;
  readonly query: Query;
  readonly text: string;
}

function column(definition: ColumnDefinition, text: string): TableColumn {
  switch (definition.kind) {
    case 'physical':
      return { kind: 'physical', name: definition.name, type: resolveType(definition.type, text) };
    case 'computed':
      return { kind: 'computed', name: definition.name, expression: definition.expression };
    default: {
      const metadata = KAFKA_METADATA[definition.key];
      if (!metadata) {
        if (definition.key === 'headers' || definition.key === 'leader-epoch') throw new SqlUnsupportedError(`the metadata column '${definition.key}'`, definition.position, text);
        throw new SqlError(`the kafka connector has no metadata '${definition.key}': it has ${Object.keys(KAFKA_METADATA).join(', ')}`, definition.position, text);
      }
      const type = resolveType(definition.type, text);
      if (type.kind !== metadata.type.kind) {
        throw new SqlError(`the metadata '${definition.key}' is ${typeName(metadata.type)}, not ${typeName(type)}`, definition.position, text);
      }
      return { kind: 'metadata', name: definition.name, type, key: definition.key, virtual: definition.virtual || !metadata.writable };
    }
  }
}

/** Checks a CREATE TABLE's columns and keys, and keeps it for planning. */
export function connectorTable(statement: CreateTable, text: string): ConnectorTable {
  const columns = statement.columns.map((definition) => column(definition, text));
  const names = new Set<string>();
  for (const definition of statement.columns) {
    const lower = definition.name.toLowerCase();
    if (names.has(lower)) throw new SqlError(`the column '${definition.name}' is declared twice`, definition.position, text);
    names.add(lower);
  }
  for (const key of statement.primaryKey ?? []) {
    if (!names.has(key.toLowerCase())) throw new SqlError(`the primary key's column '${key}' is not a column of ${statement.name}`, statement.position, text);
  }
  if (statement.watermark && !names.has(statement.watermark.column.toLowerCase())) {
    throw new SqlError(`the watermark's column '${statement.watermark.column}' is not a column of ${statement.name}`, statement.watermark.position, text);
  }
  return { kind: 'connector', name: statement.name, columns, watermark: statement.watermark, primaryKey: statement.primaryKey, options: statement.options, position: statement.position, text };
}

/** The physical columns, which the format reads and writes. */
export function physicalFields(table: ConnectorTable): Field[] {
  return table.columns.flatMap((c) => (c.kind === 'physical' ? [{ name: c.name, type: c.type }] : []));
}
