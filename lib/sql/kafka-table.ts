import type { DataStream } from '../api/datastream.js';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import { DeliveryGuarantee, KafkaSink, type KafkaRecordSerializationSchema } from '../api/sink.js';
import { KafkaSource, OffsetResetStrategy, OffsetsInitializer } from '../api/source.js';
import { WatermarkStrategy } from '../api/watermark.js';
import type { KafkaRecord } from '../kafka/records.js';
import { physicalFields, type ConnectorTable, type TableColumn } from './catalog.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import type { Compiled, Field, Row, Scope } from './compiled.js';
import { compileExpression } from './expressions.js';
import { csvRowReader, csvRowWriter, type CsvFormatOptions } from './csv-format.js';
import { jsonRowReader, jsonRowWriter, type JsonFormatOptions } from './json-format.js';
import type { SqlSession } from './session.js';
import { isTemporal, typeName, type SqlValue } from './types.js';

/**
 * Sluice's own option, which Flink has no need of: the topic's producers key every record by the
 * first grouping key, so that the aggregation runs where the records are read, without a
 * repartition topic (KafkaSourceBuilder.setPartitionedByRecordKey; docs/api.md, "Keys, stages
 * and repartition topics").
 */
const SLUICE_PARTITIONED_BY_KEY = 'sluice.partitioned-by-key';

/** The csv format's options, as Flink names them (each also as value.csv.…). */
const CSV_OPTIONS = [
  'csv.field-delimiter',
  'csv.disable-quote-character',
  'csv.quote-character',
  'csv.allow-comments',
  'csv.ignore-parse-errors',
  'csv.array-element-delimiter',
  'csv.escape-character',
  'csv.null-literal',
  'csv.write-bigdecimal-in-scientific-notation',
].flatMap((option) => [option, `value.${option}`]);

/** The Kafka connector's options that Sluice reads, as Flink names them. */
const KAFKA_OPTIONS = new Set([
  'connector',
  'topic',
  'properties.bootstrap.servers',
  'properties.group.id',
  'properties.auto.offset.reset',
  'scan.startup.mode',
  'scan.startup.timestamp-millis',
  'format',
  'value.format',
  'json.fail-on-missing-field',
  'json.ignore-parse-errors',
  'json.timestamp-format.standard',
  ...CSV_OPTIONS,
  'key.format',
  'key.fields',
  'value.fields-include',
  'sink.delivery-guarantee',
  'sink.transactional-id-prefix',
  SLUICE_PARTITIONED_BY_KEY,
]);

const UNSUPPORTED_OPTIONS: readonly [RegExp, string][] = [
  [/^topic-pattern$/, "'topic-pattern'"],
  [/^key\.fields-prefix$/, "'key.fields-prefix'"],
  [/^key\.json\./, "key.json.* options"],
  [/^sink\.partitioner$/, "'sink.partitioner'"],
  [/^scan\.startup\.specific-offsets$/, 'specific startup offsets'],
  [/^scan\.bounded\./, 'bounded scans'],
];

/** A planned relation: its rows, its columns, and which column is its event time, if any. */
export interface PlannedRelation {
  readonly stream: DataStream<Row>;
  readonly fields: readonly Field[];
  readonly rowtime: number | undefined;
  /**
   * An updating relation's rows are changes: each row carries its RowKind after its columns
   * (at `fields.length`). `keys` are the columns that identify a row (the GROUP BY keys the
   * SELECT list keeps), `producer` what makes the updates, for errors, and `kinds` the RowKinds
   * it makes when they are not +I, -U and +U. `unpaired`: a filter may have dropped the +U that
   * follows a -U (the row no longer meets its condition), so an upsert sink deletes on a -U.
   * `versionTime`: the column of each row's event time, when the changes are a versioned table's
   * (each key's rows by their time, as a deduplication that keeps the last row makes them), which
   * a temporal join reads.
   */
  readonly updating?: {
    readonly keys: readonly number[];
    readonly producer: string;
    readonly kinds?: string;
    readonly unpaired?: boolean;
    readonly versionTime?: number;
  };
}

function tableError(table: ConnectorTable, reason: string): SqlError {
  return new SqlError(`table ${table.name}: ${reason}`, table.position, table.text);
}

/** The upsert-kafka connector's options: a sink's, keyed by the primary key. */
const UPSERT_KAFKA_OPTIONS = new Set([
  'connector',
  'topic',
  'properties.group.id',
  'properties.bootstrap.servers',
  'key.format',
  'value.format',
  'value.fields-include',
  'json.timestamp-format.standard',
  ...CSV_OPTIONS,
  'sink.delivery-guarantee',
  'sink.transactional-id-prefix',
]);

/** Whether the table is an upsert-kafka one: each key's latest row, a NULL value deleting it. */
export function isUpsertTable(table: ConnectorTable): boolean {
  return table.options.get('connector') === 'upsert-kafka';
}

/** Checks the table's options against the connector's, failing on any it does not know, as Flink does. */
function checkOptions(table: ConnectorTable): void {
  const connector = table.options.get('connector');
  if (connector !== 'kafka' && connector !== 'upsert-kafka') {
    throw tableError(table, `'connector' = '${connector ?? ''}' is not a connector Sluice has: use 'kafka' or 'upsert-kafka'`);
  }
  const known = connector === 'kafka' ? KAFKA_OPTIONS : UPSERT_KAFKA_OPTIONS;
  for (const key of table.options.keys()) {
    const unsupported = UNSUPPORTED_OPTIONS.find(([pattern]) => pattern.test(key));
    if (unsupported) throw new SqlUnsupportedError(unsupported[1], table.position, table.text);
    if (!known.has(key) && !key.startsWith('properties.')) {
      throw tableError(table, `unsupported option '${key}' for the ${connector} connector; its options are ${[...known].join(', ')} and properties.*`);
    }
  }
  if (connector === 'upsert-kafka') {
    if (!table.primaryKey) throw tableError(table, "an 'upsert-kafka' table needs a PRIMARY KEY (…) NOT ENFORCED: the key each record is written under");
    required(table, 'key.format', "the format of the primary key's columns, 'raw' or 'json'");
    required(table, 'value.format', "'json', 'csv' or 'raw'");
  }
  const format = valueFormatOf(table);
  if (format === 'raw') {
    const [column, ...others] = keyLayout(table).valueFields;
    if (!column || others.length > 0 || column.type.kind !== 'STRING') {
      throw tableError(table, "the 'raw' format holds one STRING column in the value: declare one (or use 'json')");
    }
  }
}

/** The table's value format: 'json', 'csv' or 'raw', else refused naming the formats there are. */
function valueFormatOf(table: ConnectorTable): 'json' | 'csv' | 'raw' {
  const format = table.options.get('value.format') ?? table.options.get('format');
  if (format === undefined) throw tableError(table, "needs 'format' = 'json' (or 'csv' or 'raw')");
  if (format === 'json' || format === 'csv' || format === 'raw') return format;
  if (['avro', 'avro-confluent', 'protobuf', 'protobuf-confluent', 'debezium-json', 'canal-json', 'maxwell-json'].includes(format)) {
    throw new SqlUnsupportedError(`the '${format}' format`, table.position, table.text);
  }
  throw tableError(table, `'format' = '${format}' is not a format: use 'json', 'csv' or 'raw'`);
}

/** The option that skips records the value format cannot read. */
function ignoreParseErrorsOption(table: ConnectorTable): string {
  return valueFormatOf(table) === 'csv' ? 'csv.ignore-parse-errors' : 'json.ignore-parse-errors';
}

/**
 * How a record's value becomes the value columns and back: JSON by field name, CSV by position
 * (null for a record csv.ignore-parse-errors skips), or `raw`, the value's UTF-8 text as its one
 * STRING column, a NULL value (a tombstone) as NULL both ways.
 */
function valueFormat(
  table: ConnectorTable,
  fields: readonly Field[],
  options: JsonFormatOptions,
): { read: (value: Buffer | null) => SqlValue[] | null; write: (values: readonly SqlValue[]) => string | null } {
  const format = valueFormatOf(table);
  if (format === 'raw') {
    return { read: (value) => [value === null ? null : value.toString('utf8')], write: ([text]) => (text === null || text === undefined ? null : String(text)) };
  }
  const [read, write] = format === 'csv' ? [csvRowReader(fields, csvOptions(table)), csvRowWriter(fields, csvOptions(table))] : [jsonRowReader(fields, options), jsonRowWriter(fields, options)];
  return {
    read: (value) => {
      if (value === null) throw new Error(`the record has a null value (a tombstone), which the ${format} format does not read`);
      return read(value.toString('utf8'));
    },
    write,
  };
}

/** The csv.* options (or value.csv.*), checked as Flink checks them. */
function csvOptions(table: ConnectorTable): CsvFormatOptions {
  const option = (key: string) => table.options.get(`value.${key}`) ?? table.options.get(key);
  const flag = (key: string, fallback: boolean) => {
    const value = option(key) ?? String(fallback);
    if (value !== 'true' && value !== 'false') throw tableError(table, `'${key}' is 'true' or 'false', not '${value}'`);
    return value === 'true';
  };
  const character = (key: string, fallback: string | undefined) => {
    const value = option(key) ?? fallback;
    if (value !== undefined && value.length !== 1) throw tableError(table, `'${key}' must be one character, not '${value}' (a tab is U&'\\0009')`);
    return value;
  };
  const quoteDisabled = flag('csv.disable-quote-character', false);
  if (quoteDisabled && option('csv.quote-character') !== undefined) {
    throw tableError(table, "'csv.quote-character' and 'csv.disable-quote-character' = 'true' cannot both be set");
  }
  return {
    fieldDelimiter: character('csv.field-delimiter', ',') as string,
    quoteCharacter: quoteDisabled ? undefined : character('csv.quote-character', '"'),
    allowComments: flag('csv.allow-comments', false),
    ignoreParseErrors: flag('csv.ignore-parse-errors', false),
    escapeCharacter: character('csv.escape-character', undefined),
    nullLiteral: option('csv.null-literal'),
    writeBigDecimalInScientificNotation: flag('csv.write-bigdecimal-in-scientific-notation', true),
  };
}

function required(table: ConnectorTable, key: string, why: string): string {
  const value = table.options.get(key);
  if (value === undefined || value.trim() === '') throw tableError(table, `needs '${key}' (${why})`);
  return value;
}

function jsonOptions(table: ConnectorTable): JsonFormatOptions {
  const flag = (key: string) => {
    const value = table.options.get(key) ?? 'false';
    if (value !== 'true' && value !== 'false') throw tableError(table, `'${key}' is 'true' or 'false', not '${value}'`);
    return value === 'true';
  };
  const standard = table.options.get('json.timestamp-format.standard') ?? 'SQL';
  if (standard !== 'SQL' && standard !== 'ISO-8601') throw tableError(table, `'json.timestamp-format.standard' is 'SQL' or 'ISO-8601', not '${standard}'`);
  if (flag('json.fail-on-missing-field') && flag('json.ignore-parse-errors')) {
    throw tableError(table, "'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true");
  }
  return { failOnMissingField: flag('json.fail-on-missing-field'), timestampStandard: standard };
}

/** Where a source starts without a checkpoint: scan.startup.mode, Flink's default being group-offsets. */
function startingOffsets(table: ConnectorTable): OffsetsInitializer {
  const mode = table.options.get('scan.startup.mode') ?? 'group-offsets';
  switch (mode) {
    case 'earliest-offset':
      return OffsetsInitializer.earliest();
    case 'latest-offset':
      return OffsetsInitializer.latest();
    case 'group-offsets': {
      const reset = table.options.get('properties.auto.offset.reset') ?? 'none';
      const strategy = reset === 'earliest' ? OffsetResetStrategy.EARLIEST : reset === 'latest' ? OffsetResetStrategy.LATEST : OffsetResetStrategy.NONE;
      return OffsetsInitializer.committedOffsets(strategy);
    }
    case 'timestamp':
      return OffsetsInitializer.timestamp(Number(required(table, 'scan.startup.timestamp-millis', "scan.startup.mode 'timestamp' starts there")));
    default:
      if (mode === 'specific-offsets') throw new SqlUnsupportedError("scan.startup.mode 'specific-offsets'", table.position, table.text);
      throw tableError(table, `'scan.startup.mode' = '${mode}' is not a mode: earliest-offset, latest-offset, group-offsets or timestamp`);
  }
}

/** The record key's columns (key.format and key.fields), and which physical columns the value holds (value.fields-include). */
interface KeyLayout {
  readonly format: 'raw' | 'json' | undefined;
  readonly keyFields: readonly Field[];
  readonly valueFields: readonly Field[];
}

function keyLayout(table: ConnectorTable): KeyLayout {
  const physical = physicalFields(table);
  const format = table.options.get('key.format');
  const names = isUpsertTable(table) ? table.primaryKey : table.options.get('key.fields')?.split(';').map((name) => name.trim());
  const include = table.options.get('value.fields-include') ?? 'ALL';
  if (include !== 'ALL' && include !== 'EXCEPT_KEY') throw tableError(table, `'value.fields-include' is 'ALL' or 'EXCEPT_KEY', not '${include}'`);
  if (format === undefined) {
    if (names) throw tableError(table, "'key.fields' needs 'key.format' ('raw' or 'json') to write the key in");
    if (include === 'EXCEPT_KEY') throw tableError(table, "'value.fields-include' = 'EXCEPT_KEY' needs 'key.format' and 'key.fields'");
    return { format: undefined, keyFields: [], valueFields: physical };
  }
  if (format !== 'raw' && format !== 'json') throw tableError(table, `'key.format' = '${format}' is not a key format Sluice has: use 'raw' or 'json'`);
  if (!names) throw tableError(table, "'key.format' needs 'key.fields': the columns the key holds, as 'a;b'");
  const keyFields = names.map((name) => {
    const field = physical.find((f) => f.name === name);
    if (!field) throw tableError(table, `'key.fields' names '${name}', which is not a physical column`);
    return field;
  });
  if (format === 'raw' && (keyFields.length !== 1 || keyFields[0]?.type.kind !== 'STRING')) {
    throw tableError(table, "'key.format' = 'raw' holds one STRING column: name one in 'key.fields', or use 'json'");
  }
  const valueFields = include === 'ALL' ? physical : physical.filter((f) => !keyFields.includes(f));
  return { format, keyFields, valueFields };
}

function metadataValue(record: KafkaRecord, key: string): SqlValue {
  switch (key) {
    case 'topic':
      return record.topic;
    case 'partition':
      return record.partition;
    case 'offset':
      return record.offset;
    case 'timestamp':
      return record.timestamp;
    default:
      return record.timestampType;
  }
}

/** How a record becomes a row: the format's physical values and the metadata, then the computed columns over them. */
function rowReader(table: ConnectorTable, session: SqlSession): { read: (record: KafkaRecord) => Row | null; fields: Field[]; skips: boolean } {
  const layout = keyLayout(table);
  const options = jsonOptions(table);
  const readValue = valueFormat(table, layout.valueFields, options).read;
  const readKey = layout.format === 'json' ? jsonRowReader(layout.keyFields, options) : undefined;
  const keyFromValue = layout.valueFields.length === physicalFields(table).length;
  const upsert = isUpsertTable(table);
  const skipOption = ignoreParseErrorsOption(table);
  const ignoreParseErrors = table.options.get(skipOption) === 'true' || table.options.get(`value.${skipOption}`) === 'true';
  const stored = table.columns.filter((c): c is Exclude<TableColumn, { kind: 'computed' }> => c.kind !== 'computed');
  const storedScope: Scope = { fields: stored.map((c) => ({ name: c.name, type: c.type })), text: table.text, zone: session.zone, functions: session.functions };
  const computed = new Map(
    table.columns.flatMap((c) => (c.kind === 'computed' ? [[c.name, compileExpression(c.expression, storedScope)] as const] : [])),
  );
  const fields = table.columns.map((c) => ({ name: c.name, type: c.kind === 'computed' ? (computed.get(c.name) as Compiled).type : c.type }));
  const columnOrder = table.columns.map((c) => (c.kind === 'computed' ? (computed.get(c.name) as Compiled) : stored.indexOf(c)));
  const valueIndex = new Map(layout.valueFields.map((f, i) => [f.name, i]));
  const keyIndex = new Map(layout.keyFields.map((f, i) => [f.name, i]));
  /** The physical columns by name: from the value, or for EXCEPT_KEY's key columns from the key. */
  const keysOf = (record: KafkaRecord): SqlValue[] => {
    const keyText = record.key?.toString('utf8') ?? null;
    if (keyText === null && upsert) throw new Error('the record has no key, which an upsert-kafka table reads its PRIMARY KEY from');
    return readKey ? (keyText === null ? [] : readKey(keyText)) : [keyText];
  };
  const physicalOf = (record: KafkaRecord): ((name: string) => SqlValue) | null => {
    // An upsert-kafka tombstone deletes its key's row: the key's columns, the others NULL.
    if (upsert && record.value === null) {
      const keys = keysOf(record);
      return (name) => (keyIndex.has(name) ? (keys[keyIndex.get(name) as number] ?? null) : null);
    }
    const values = readValue(record.value);
    if (values === null) return null;
    if (keyFromValue) return (name) => values[valueIndex.get(name) as number] ?? null;
    const keys = keysOf(record);
    return (name) => (valueIndex.has(name) ? (values[valueIndex.get(name) as number] ?? null) : (keys[keyIndex.get(name) as number] ?? null));
  };
  const read = (record: KafkaRecord): Row | null => {
    let physical: ((name: string) => SqlValue) | null;
    try {
      physical = physicalOf(record);
    } catch (error) {
      if (ignoreParseErrors) return null;
      throw new Error(`table ${table.name} cannot read the record: ${(error as Error).message} (set '${skipOption}' = 'true' to skip such records)`, { cause: error });
    }
    if (physical === null) return null;
    const base = stored.map((c) => (c.kind === 'physical' ? physical(c.name) : metadataValue(record, c.key)));
    const row = columnOrder.map((at) => (typeof at === 'number' ? (base[at] ?? null) : at.evaluate(base)));
    // An upsert-kafka table's record is a change of its key's row: its kind follows the columns.
    return upsert ? [...row, record.value === null ? '-D' : '+U'] : row;
  };
  return { read, fields, skips: ignoreParseErrors };
}

/** The table's watermark strategy: its rowtime column's value, and the largest value of its WATERMARK expression so far. */
function watermarkStrategy(table: ConnectorTable, fields: readonly Field[], session: SqlSession): { strategy: WatermarkStrategy<Row | null>; rowtime: number | undefined } {
  const { watermark } = table;
  if (!watermark) return { strategy: WatermarkStrategy.noWatermarks(), rowtime: undefined };
  const scope: Scope = { fields, text: table.text, zone: session.zone, functions: session.functions };
  const rowtime = fields.findIndex((f) => f.name.toLowerCase() === watermark.column.toLowerCase());
  const column = fields[rowtime] as Field;
  if (!isTemporal(column.type) || column.type.precision > 3) {
    throw new SqlError(`the rowtime column '${column.name}' must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), not ${typeName(column.type)}`, watermark.position, table.text);
  }
  if (watermark.expression.kind === 'call' && watermark.expression.name === 'SOURCE_WATERMARK') {
    throw new SqlError('the kafka connector emits no watermarks of its own: SOURCE_WATERMARK() is for tables made with fromDataStream', watermark.position, table.text);
  }
  const bound = compileExpression(watermark.expression, scope);
  if (bound.type.kind !== column.type.kind) {
    throw new SqlError(`the watermark expression is ${typeName(bound.type)}; it must be ${column.type.kind} like its column`, watermark.position, table.text);
  }
  const strategy = WatermarkStrategy.forGenerator<Row | null>(() => {
    let highest: number | undefined;
    return {
      onEvent: (row) => {
        const value = row === null ? null : bound.evaluate(row);
        if (typeof value === 'number' && (highest === undefined || value > highest)) highest = value;
      },
      onPeriodicEmit: (output) => {
        if (highest !== undefined) output.emitWatermark(highest);
      },
      snapshotState: () => highest ?? null,
      restoreState: (state) => {
        highest = typeof state === 'number' ? state : undefined;
      },
    };
  }, `WATERMARK FOR ${column.name}`).withTimestampAssigner((row, recordTimestamp) => (row === null ? recordTimestamp : (row[rowtime] as number)));
  return { strategy: session.idleTimeout === undefined ? strategy : strategy.withIdleness(session.idleTimeout), rowtime };
}

/**
 * Reads a kafka table as a stream of rows; an upsert-kafka table, from its topic's start, as the
 * changes of its keys' rows, each kind (+U, or -D for a tombstone) after its columns.
 */
export function kafkaSource(table: ConnectorTable, env: StreamExecutionEnvironment, session: SqlSession): PlannedRelation {
  checkOptions(table);
  const upsert = isUpsertTable(table);
  if (upsert && table.watermark) {
    throw new SqlUnsupportedError("a WATERMARK on an 'upsert-kafka' table (a versioned table, which temporal joins read)", table.watermark.position, table.text);
  }
  const { read, fields, skips } = rowReader(table, session);
  const { strategy, rowtime } = watermarkStrategy(table, fields, session);
  const source = KafkaSource.builder<Row | null>()
    .setBootstrapServers(required(table, 'properties.bootstrap.servers', 'the brokers, host:port,host:port'))
    .setTopics(required(table, 'topic', 'the topic to read').split(';'))
    .setGroupId(required(table, 'properties.group.id', "the consumer group the pipeline's trigger reads with"))
    .setStartingOffsets(upsert ? OffsetsInitializer.earliest() : startingOffsets(table))
    .setPartitionedByRecordKey(table.options.get(SLUICE_PARTITIONED_BY_KEY) === 'true')
    .setDeserializer({
      deserialize: (record) => {
        const row = read(record);
        if (row !== null && rowtime !== undefined && row[rowtime] === null) {
          throw new Error(`table ${table.name}: the rowtime column '${fields[rowtime]?.name ?? ''}' is NULL; a row needs its event time`);
        }
        return row;
      },
    })
    .build();
  const rows = env.fromSource(source, strategy, table.name);
  const stream = skips ? rows.filter((row) => row !== null) : rows;
  const relation = { stream: stream as DataStream<Row>, fields: fields.map((f, i) => (i === rowtime ? { ...f, type: { ...f.type, rowtime: true } } : f)), rowtime };
  if (!upsert) return relation;
  const keys = (table.primaryKey ?? []).map((name) => fields.findIndex((f) => f.name === name));
  return { ...relation, updating: { keys, producer: `the upsert-kafka table ${table.name}`, kinds: '+U, -D' } };
}

const GUARANTEES: Record<string, DeliveryGuarantee> = {
  none: DeliveryGuarantee.NONE,
  'at-least-once': DeliveryGuarantee.AT_LEAST_ONCE,
  'exactly-once': DeliveryGuarantee.EXACTLY_ONCE,
};

/** The columns an INSERT INTO the table writes, in order: physical and writable metadata columns. */
export function persistedColumns(table: ConnectorTable): TableColumn[] {
  return table.columns.filter((c) => c.kind === 'physical' || (c.kind === 'metadata' && !c.virtual));
}

/**
 * Writes rows of the table's persisted columns to its topic in its format, with its delivery
 * guarantee. An upsert-kafka table's rows may be changes (their RowKind after the columns): a
 * -D is written as a tombstone of its key, anything else as the key's new value.
 */
export function kafkaSink(table: ConnectorTable): KafkaSink<Row> {
  checkOptions(table);
  const persisted = persistedColumns(table);
  const layout = keyLayout(table);
  const options = jsonOptions(table);
  const positionOf = (field: Field) => persisted.findIndex((c) => c.name === field.name);
  const valuePositions = layout.valueFields.map(positionOf);
  const keyPositions = layout.keyFields.map(positionOf);
  const stamp = persisted.findIndex((c) => c.kind === 'metadata' && c.key === 'timestamp');
  const writeValue = valueFormat(table, layout.valueFields, options).write;
  const writeKey = layout.format === 'json' ? jsonRowWriter(layout.keyFields, options) : undefined;
  const keyOf = (row: Row): string | null => {
    if (layout.format === undefined) return null;
    const values = keyPositions.map((i) => row[i] ?? null);
    return writeKey ? writeKey(values) : (values[0] as string | null);
  };
  const topic = required(table, 'topic', 'the topic to write');
  const deleted = (row: Row) => row[persisted.length] === '-D';
  const serializer: KafkaRecordSerializationSchema<Row> = {
    topic,
    serialize: (row) => {
      const timestamp = stamp < 0 ? null : row[stamp];
      const value = deleted(row) ? null : writeValue(valuePositions.map((i) => row[i] ?? null));
      return { topic, key: keyOf(row), value, ...(typeof timestamp === 'number' ? { timestamp } : {}) };
    },
  };
  const guaranteeName = table.options.get('sink.delivery-guarantee') ?? 'at-least-once';
  const guarantee = GUARANTEES[guaranteeName];
  if (!guarantee) throw tableError(table, `'sink.delivery-guarantee' = '${guaranteeName}' is not a guarantee: none, at-least-once or exactly-once`);
  const builder = KafkaSink.builder<Row>()
    .setBootstrapServers(required(table, 'properties.bootstrap.servers', 'the brokers, host:port,host:port'))
    .setRecordSerializer(serializer)
    .setDeliveryGuarantee(guarantee);
  if (guarantee === DeliveryGuarantee.EXACTLY_ONCE) builder.setTransactionalIdPrefix(required(table, 'sink.transactional-id-prefix', 'exactly-once names its transactions with it'));
  return builder.build();
}
