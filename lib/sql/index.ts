// Flink SQL and the Table API on Sluice (docs/sql.md).
export { SqlError, SqlUnsupportedError, type SqlPosition } from './errors.js';
export { Schema, sqlPipeline, StreamTableEnvironment, Table, type ChangelogRow, type RowKind, type SchemaBuilder, type SqlPipelineOptions } from './table-environment.js';
export type { SqlValue } from './types.js';
export type { ScalarFunction } from './user-functions.js';
