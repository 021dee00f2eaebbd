import type { DataStream } from '../api/datastream.js';
import { StreamExecutionEnvironment } from '../api/environment.js';
import { DeliveryGuarantee } from '../api/sink.js';
import type { Statement } from './ast.js';
import { resolveType } from './casts.js';
import { connectorTable, type ConnectorTable } from './catalog.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import type { Field, Row } from './compiled.js';
import { isUpsertTable, kafkaSink, persistedColumns, type PlannedRelation } from './kafka-table.js';
import { parseQuery, parseStatements } from './parser.js';
import { alignToSink, planQuery, type CatalogTable, type PlanContext } from './planner.js';
import { applySetting, defaultSession, type SqlSession } from './session.js';
import { NULL_TYPE, typeName, type SqlType, type SqlValue } from './types.js';
import { userFunction, type ScalarFunction } from './user-functions.js';

/** A row's change, as Flink's RowKind: insert, update before and after, delete. */
export type RowKind = '+I' | '-U' | '+U' | '-D';

/** A row of a Table as the DataStream API sees it: its change and its columns by name, in order. */
export interface ChangelogRow {
  readonly kind: RowKind;
  readonly fields: Readonly<Record<string, SqlValue>>;
}

/** A query's result: its columns and their types, and what the pipeline computes it with. */
export class Table {
  /** @internal */
  constructor(
    /** @internal */ readonly relation: PlannedRelation,
    private readonly tableEnv: StreamTableEnvironment,
  ) {}

  /** The columns, as Flink's `Table.getResolvedSchema()` prints them. */
  get schema(): readonly { readonly name: string; readonly type: string }[] {
    return this.relation.fields.map((f) => ({ name: f.name, type: typeName(f.type) }));
  }

  /** Runs a query over this table, named `name` in it. */
  sqlQuery(name: string, query: string): Table {
    this.tableEnv.createTemporaryView(name, this);
    return this.tableEnv.sqlQuery(query);
  }
}

/**
 * A schema for {@link StreamTableEnvironment.fromDataStream}, as Flink's `Schema`: the
 * element's fields as columns, the element's timestamp as a rowtime column, and its watermark.
 */
export class Schema {
  private constructor(
    /** The columns: a field of the element each, or its timestamp (`rowtime`). */
    readonly columns: readonly { readonly name: string; readonly type: string; readonly rowtime: boolean }[],
    readonly watermark: { readonly column: string; readonly expression: string } | undefined,
  ) {}

  static newBuilder(): SchemaBuilder {
    return new SchemaBuilder((columns, watermark) => new Schema(columns, watermark));
  }
}

/** Builds a {@link Schema}; from `Schema.newBuilder()`. */
export type { SchemaBuilder };

class SchemaBuilder {
  private readonly columns: { name: string; type: string; rowtime: boolean }[] = [];
  private watermarkSpec: { column: string; expression: string } | undefined;

  constructor(private readonly create: (columns: SchemaBuilder['columns'], watermark: SchemaBuilder['watermarkSpec']) => Schema) {}

  /** A column read from the element's field of the same name. */
  column(name: string, type: string): this {
    this.columns.push({ name, type, rowtime: false });
    return this;
  }

  /** `columnByMetadata(name, 'TIMESTAMP_LTZ(3)', 'rowtime')`: the element's timestamp as a column, the one metadata a stream has. */
  columnByMetadata(name: string, type: string, _key: 'rowtime'): this {
    this.columns.push({ name, type, rowtime: true });
    return this;
  }

  /** `watermark('ts', 'SOURCE_WATERMARK()')`: the stream's own watermarks, the only kind a DataStream's table takes. */
  watermark(column: string, expression: 'SOURCE_WATERMARK()'): this {
    if (expression.replace(/\s/g, '').toUpperCase() !== 'SOURCE_WATERMARK()') {
      throw new Error(`A table from a DataStream keeps the stream's watermarks: watermark('${column}', 'SOURCE_WATERMARK()'), not '${expression}'`);
    }
    this.watermarkSpec = { column, expression };
    return this;
  }

  build(): Schema {
    return this.create([...this.columns], this.watermarkSpec);
  }
}

function typeOf(text: string): SqlType {
  const [statement] = parseStatements(`CREATE TABLE t (c ${text})`);
  const column = statement?.kind === 'createTable' ? statement.columns[0] : undefined;
  if (column?.kind !== 'physical') throw new Error(`'${text}' is not a type`);
  return resolveType(column.type, text);
}

/**
 * Flink SQL and the Table API over a pipeline's environment, as Flink's StreamTableEnvironment:
 * `executeSql` runs DDL, SET and INSERT INTO (each INSERT adds its sink to the pipeline),
 * `sqlQuery` plans a query into a {@link Table}, and `fromDataStream` and
 * `toChangelogStream` cross between tables and streams.
 */
export class StreamTableEnvironment {
  private readonly tables = new Map<string, CatalogTable>();
  private readonly session: SqlSession = defaultSession();
  private readonly context: PlanContext;

  private constructor(readonly env: StreamExecutionEnvironment) {
    this.context = { env, session: this.session, tables: this.tables, sources: new Map(), counter: { next: 0 } };
  }

  static create(env: StreamExecutionEnvironment): StreamTableEnvironment {
    return new StreamTableEnvironment(env);
  }

  /** The session's time zone (SET 'table.local-time-zone'), UTC unless set. */
  get localTimeZone(): string {
    return this.session.zone;
  }

  /** The pipeline.name a script SET, if it did. */
  get pipelineName(): string | undefined {
    return this.session.pipelineName;
  }

  /** Runs a script of statements separated by `;`. */
  executeSql(script: string): void {
    for (const statement of parseStatements(script)) this.execute(statement, script);
  }

  sqlQuery(query: string): Table {
    return new Table(planQuery(parseQuery(query), this.context, query), this);
  }

  /**
   * Registers a user-defined scalar function for every query of this environment, as Flink's
   * createTemporarySystemFunction does: SQL calls it by `name` (case-insensitive), and it
   * shadows a built-in function of that name.
   *
   * ```ts
   * tableEnv.createTemporarySystemFunction('count_char', {
   *   argumentTypes: ['STRING', 'STRING'],
   *   resultType: 'BIGINT',
   *   eval: (text, char) => String(text).split(String(char)).length - 1,
   * });
   * ```
   */
  createTemporarySystemFunction(name: string, fn: ScalarFunction): void {
    const key = name.toUpperCase();
    if (this.session.functions.has(key)) throw new Error(`createTemporarySystemFunction('${name}', …): a function named ${name} is registered already`);
    this.session.functions.set(key, userFunction(name, fn, typeOf));
  }

  createTemporaryView(name: string, table: Table): void {
    this.register({ kind: 'stream', name, relation: table.relation }, name);
  }

  /** A stream of objects as a table: each schema column from the element's field of its name, the rowtime from the element's timestamp. */
  fromDataStream<T extends object>(stream: DataStream<T>, schema: Schema): Table {
    const fields: Field[] = schema.columns.map((c) => ({ name: c.name, type: c.rowtime ? { ...typeOf(c.type), rowtime: schema.watermark?.column === c.name } : typeOf(c.type) } as Field));
    const rowtime = schema.watermark ? schema.columns.findIndex((c) => c.name === schema.watermark?.column && c.rowtime) : -1;
    if (schema.watermark && rowtime < 0) throw new Error(`Schema.watermark('${schema.watermark.column}', …) names no columnByMetadata(…, 'rowtime') column`);
    const columns = schema.columns;
    const rows = stream.map((element, { timestamp }) => columns.map((c) => (c.rowtime ? (timestamp ?? null) : (((element as Record<string, unknown>)[c.name] ?? null) as SqlValue))));
    return new Table({ stream: rows, fields, rowtime: rowtime < 0 ? undefined : rowtime }, this);
  }

  /** The table's rows as a stream: each with its change (insert-only tables give +I) and its columns by name. */
  toChangelogStream(table: Table): DataStream<ChangelogRow> {
    const names = table.relation.fields.map((f) => f.name);
    const kindOf = table.relation.updating ? (row: Row) => row[names.length] as RowKind : () => '+I' as const;
    return table.relation.stream.map((row): ChangelogRow => ({ kind: kindOf(row), fields: Object.fromEntries(names.map((name, i) => [name, row[i] ?? null])) }));
  }

  private register(table: CatalogTable, name: string): void {
    this.tables.set(name.toLowerCase(), table);
  }

  private execute(statement: Statement, text: string): void {
    switch (statement.kind) {
      case 'set':
        try {
          applySetting(this.session, statement.key, statement.value);
        } catch (error) {
          throw new SqlError((error as Error).message, statement.position, text);
        }
        if (this.session.checkpointInterval !== undefined) this.env.enableCheckpointing(this.session.checkpointInterval);
        return;
      case 'createTable': {
        const exists = this.tables.has(statement.name.toLowerCase());
        if (exists && statement.ifNotExists) return;
        if (exists) throw new SqlError(`table ${statement.name} already exists`, statement.position, text);
        this.register(connectorTable(statement, text), statement.name);
        return;
      }
      case 'createView':
        if (this.tables.has(statement.name.toLowerCase())) throw new SqlError(`table or view ${statement.name} already exists`, statement.position, text);
        this.register({ kind: 'view', name: statement.name, query: statement.query, text }, statement.name);
        return;
      case 'insert':
        this.insert(statement, text);
        return;
      case 'statementSet':
        for (const insert of statement.inserts) this.insert(insert, text);
        return;
      default:
        throw new SqlError('a SELECT on its own has nowhere to go in a pipeline: INSERT INTO a table, or use sqlQuery and toChangelogStream', statement.position, text);
    }
  }

  private insert(statement: Extract<Statement, { kind: 'insert' }>, text: string): void {
    const table = this.tables.get(statement.table.toLowerCase());
    if (!table) throw new SqlError(`table ${statement.table} not found: create it with CREATE TABLE first`, statement.position, text);
    if (table.kind !== 'connector') throw new SqlError(`${statement.table} is a view; INSERT INTO needs a table with a connector`, statement.position, text);
    const query = planQuery(statement.query, this.context, text);
    const sink = kafkaSink(table);
    if (query.updating?.kinds && query.updating.keys.length === 0) {
      throw new SqlUnsupportedError(
        `INSERT INTO ${table.name} of the ${query.updating.kinds} changes ${query.updating.producer} makes (toChangelogStream reads them)`,
        statement.position,
        text,
      );
    }
    if (query.updating && !isUpsertTable(table)) {
      throw new SqlError(
        `table sink '${table.name}' doesn't support consuming update changes, which ${query.updating.producer} produces: ` +
          "INSERT INTO a table with 'connector' = 'upsert-kafka' and a PRIMARY KEY (…) NOT ENFORCED on the grouping keys",
        statement.position,
        text,
      );
    }
    const persisted = persistedColumns(table);
    const sinkFields = persisted.map((c) => ({ name: c.name, type: (c as { type: SqlType }).type }));
    if (query.updating) this.checkUpsertKey(query, statement, table, sinkFields, text);
    const aligned = alignToSink(this.byColumnList(query, statement, sinkFields, table, text), sinkFields, this.context, table.name, text, statement.position);
    // An upsert sink keeps each key's latest row: the row an update replaces needs no record,
    // unless a filter may have dropped the update's new row; then the old one is deleted first.
    const width = sinkFields.length;
    const stream = !query.updating
      ? aligned
      : query.updating.unpaired
        ? aligned.map((row) => (row[width] === '-U' ? [...row.slice(0, width), '-D'] : row)).name(`${table.name}-upserts`)
        : aligned.filter((row) => row[width] !== '-U').name(`${table.name}-upserts`);
    stream.sinkTo(sink).name(`${table.name}-sink`);
  }

  /**
   * An upsert sink replaces a key's row with each change: the changes must be keyed by its
   * PRIMARY KEY, or two rows of one key would overwrite each other. (Flink materializes the
   * query's changes per sink key instead; Sluice does not yet.)
   */
  private checkUpsertKey(query: PlannedRelation, statement: Extract<Statement, { kind: 'insert' }>, table: ConnectorTable, sinkFields: readonly Field[], text: string): void {
    const primary = (table.primaryKey ?? []).map((name) => sinkFields.findIndex((f) => f.name.toLowerCase() === name.toLowerCase()));
    const placed = statement.columns ? query.updating?.keys.map((key) => sinkFields.findIndex((f) => f.name.toLowerCase() === statement.columns?.[key]?.toLowerCase())) : query.updating?.keys;
    if (JSON.stringify([...primary].sort()) !== JSON.stringify([...(placed ?? [])].sort())) {
      throw new SqlUnsupportedError(
        `an upsert sink whose PRIMARY KEY (${(table.primaryKey ?? []).join(', ')}) is not the columns the query's ${query.updating?.producer ?? 'GROUP BY'} keys its changes by`,
        statement.position,
        text,
      );
    }
  }

  /** INSERT INTO t (a, c): the query's columns placed by name, the others NULL. */
  private byColumnList(query: PlannedRelation, statement: Extract<Statement, { kind: 'insert' }>, sinkFields: readonly Field[], table: ConnectorTable, text: string): PlannedRelation {
    const { columns } = statement;
    if (!columns) return query;
    if (columns.length !== query.fields.length) throw new SqlError(`INSERT INTO ${table.name} names ${columns.length} columns and the query gives ${query.fields.length}`, statement.position, text);
    const positions = sinkFields.map((f) => columns.findIndex((c) => c.toLowerCase() === f.name.toLowerCase()));
    for (const column of columns) {
      if (!sinkFields.some((f) => f.name.toLowerCase() === column.toLowerCase())) throw new SqlError(`${table.name} has no column ${column} to insert into`, statement.position, text);
    }
    const fields = sinkFields.map((f, i) => ({ name: f.name, type: positions[i] === -1 ? NULL_TYPE : (query.fields[positions[i] as number] as Field).type }));
    const width = query.fields.length;
    const placed = (row: Row) => positions.map((at) => (at < 0 ? null : (row[at] ?? null)));
    const stream = query.stream.map(query.updating ? (row: Row) => [...placed(row), row[width] ?? null] : placed);
    return { stream, fields, rowtime: undefined, ...(query.updating ? { updating: query.updating } : {}) };
  }
}

export interface SqlPipelineOptions {
  /** The pipeline's name, where the script sets no `pipeline.name`. */
  readonly name?: string;
  /** User-defined functions the script calls, by name, registered before it runs (createTemporarySystemFunction). */
  readonly functions?: Readonly<Record<string, ScalarFunction>>;
}

/** A `.sql` file as a pipeline: the statements run on a new environment named by `pipeline.name` or `name`. */
export function sqlPipeline(script: string, options: SqlPipelineOptions = {}): StreamExecutionEnvironment {
  const probe = /SET\s+'pipeline\.name'\s*=\s*'([^']*)'/i.exec(script)?.[1];
  const name = probe ?? options.name;
  if (!name) throw new Error("A SQL pipeline needs a name: SET 'pipeline.name' = 'order-aggregation'; at the top of the file");
  const env = StreamExecutionEnvironment.create({ name });
  const tableEnv = StreamTableEnvironment.create(env);
  for (const [functionName, fn] of Object.entries(options.functions ?? {})) tableEnv.createTemporarySystemFunction(functionName, fn);
  tableEnv.executeSql(script);
  const exactlyOnce = env.getTransformations().some((node) => node.kind === 'sink' && node.sink.config.deliveryGuarantee === DeliveryGuarantee.EXACTLY_ONCE);
  if (exactlyOnce && !env.getCheckpointConfig().isCheckpointingEnabled()) {
    throw new Error(
      "A SQL pipeline with an exactly-once sink commits its output at checkpoints: SET 'execution.checkpointing.interval' = '1 min'; at the top of the file",
    );
  }
  return env;
}
