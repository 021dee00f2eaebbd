// Kafka tables as Flink's kafka connector reads and writes them: the json format and its types, key formats,
// metadata and computed columns, watermarks from the WATERMARK clause, bad records, statement sets.
import { describe, expect, it } from 'vitest';
import { sqlPipeline } from '../../../lib/sql/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

const BROKERS = "'properties.bootstrap.servers' = '127.0.0.1:9092'";

type Input = { key?: string; value: string | null; timestamp?: number }[];

/** Runs the script over the input, one batch per array (a source's watermark moves after each batch). */
function run(script: string, ...batches: Input[]) {
  const harness = new PipelineTestHarness(sqlPipeline(script, { name: 'kafka-tables' }), { sourcePartitions: { in: [0] } });
  for (const batch of batches) harness.send('in', batch);
  harness.finish();
  return harness;
}

const READINGS = `CREATE TABLE readings (
  sensor STRING,
  reading DECIMAL(6, 2),
  at_ms BIGINT,
  at AS TO_TIMESTAMP_LTZ(at_ms, 3),
  part INT METADATA FROM 'partition' VIRTUAL,
  \`offset\` BIGINT METADATA VIRTUAL,
  written TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  WATERMARK FOR at AS at - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
`;

describe('kafka tables', () => {
  it('read JSON by field name, with metadata and computed columns, and write JSON in column order, fractions of a second to their last nonzero digit', () => {
    const harness = run(
      `${READINGS}
CREATE TABLE out (sensor STRING, reading DECIMAL(8, 3), at TIMESTAMP_LTZ(3), part INT, position BIGINT, written TIMESTAMP(3))
  WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
INSERT INTO out SELECT UPPER(sensor), reading * 2, at, part, \`offset\`, CAST(written AS TIMESTAMP(3)) FROM readings WHERE reading IS NOT NULL;`,
      [
        { value: '{"sensor":"s1","reading":12.5,"at_ms":1150}', timestamp: 5_000 },
        { value: '{"at_ms":2000,"reading":null,"sensor":"s2"}', timestamp: 6_000 },
        { value: '{"sensor":"s3","reading":"0.125","at_ms":3000,"extra":true}', timestamp: 7_000 },
      ],
    );
    expect(harness.outputValues('out')).toEqual([
      '{"sensor":"S1","reading":25.000,"at":"1970-01-01 00:00:01.15Z","part":0,"position":0,"written":"1970-01-01 00:00:05"}',
      '{"sensor":"S3","reading":0.260,"at":"1970-01-01 00:00:03Z","part":0,"position":2,"written":"1970-01-01 00:00:07"}',
    ]);
  });

  it('fire event-time windows on the WATERMARK expression, and write keys with key.format', () => {
    const harness = run(
      `${READINGS}
CREATE TABLE totals (sensor STRING, window_end TIMESTAMP(3), total DECIMAL(38, 2), readings BIGINT)
  WITH ('connector' = 'kafka', 'topic' = 'totals', ${BROKERS}, 'key.format' = 'json', 'key.fields' = 'sensor;window_end',
        'value.fields-include' = 'EXCEPT_KEY', 'format' = 'json');
INSERT INTO totals
SELECT sensor, CAST(window_end AS TIMESTAMP(3)), SUM(reading), COUNT(*)
FROM TABLE(TUMBLE(TABLE readings, DESCRIPTOR(at), INTERVAL '10' SECOND))
GROUP BY sensor, window_start, window_end;`,
      [
        { value: '{"sensor":"a","reading":1.10,"at_ms":1000}' },
        { value: '{"sensor":"a","reading":2.20,"at_ms":9000}' },
        { value: '{"sensor":"b","reading":5,"at_ms":12000}' },
        { value: '{"sensor":"a","reading":7,"at_ms":15000}' },
      ],
      // The watermark is now 15 s - 5 s, past the first window [0, 10 s): this reading is late, and dropped.
      [{ value: '{"sensor":"a","reading":100,"at_ms":4000}' }],
    );
    expect(harness.output('totals').map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString() ?? ''}`)).toEqual([
      '{"sensor":"a","window_end":"1970-01-01 00:00:10"} {"total":3.30,"readings":2}',
      '{"sensor":"a","window_end":"1970-01-01 00:00:20"} {"total":7.00,"readings":1}',
      '{"sensor":"b","window_end":"1970-01-01 00:00:20"} {"total":5.00,"readings":1}',
    ]);
    expect(harness.metrics()).toMatchObject({ lateRecordsDropped: 1 });
  });

  it('name a record it cannot read by its position, and skip it with json.ignore-parse-errors', () => {
    const out = `CREATE TABLE out (sensor STRING) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
INSERT INTO out SELECT sensor FROM readings;`;
    const bad = [{ value: '{"sensor":"a","reading":1,"at_ms":1}' }, { value: '{"sensor":"b","reading":"many","at_ms":2}' }];
    expect(() => run(`${READINGS}${out}`, bad)).toThrow(/^Record in\/0@1: readings failed: table readings cannot read the record: the field "reading": .* is not a DECIMAL\(6, 2\)/);
    const lenient = READINGS.replace("'format' = 'json')", "'format' = 'json', 'json.ignore-parse-errors' = 'true')");
    expect(run(`${lenient}${out}`, bad).outputValues('out')).toEqual(['{"sensor":"a"}']);
  });

  it('read TINYINT and SMALLINT columns in their ranges, write their sum overflowed in TINYINT as Flink does, and name a value out of range', () => {
    const script = `CREATE TABLE small (level TINYINT, code SMALLINT) WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE out (level TINYINT, code SMALLINT) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
INSERT INTO out SELECT level + level, code FROM small;`;
    expect(run(script, [{ value: '{"level":100,"code":-32768}' }, { value: '{"level":-3,"code":"32767"}' }]).outputValues('out')).toEqual([
      '{"level":-56,"code":-32768}',
      '{"level":-6,"code":32767}',
    ]);
    expect(() => run(script, [{ value: '{"level":1,"code":1}' }, { value: '{"level":128,"code":1}' }])).toThrow(
      /^Record in\/0@1: small failed: table small cannot read the record: the field "level": 128 is not a TINYINT/,
    );
  });

  it('read and write DATE columns as yyyy-MM-dd in json (two-digit fields, as ISO_LOCAL_DATE) and csv (as Date.valueOf), and name a value that is no date', () => {
    const script = (format: string) => `CREATE TABLE days (d DATE, n INT) WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'format' = '${format}');
CREATE TABLE out (d DATE, next_day DATE, at_midnight TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = '${format}');
INSERT INTO out SELECT d, d + INTERVAL '1' DAY, CAST(d AS TIMESTAMP(3)) FROM days WHERE d >= DATE '2026-01-01';`;
    expect(run(script('json'), [{ value: '{"d":"2026-12-31","n":1}' }, { value: '{"d":"1999-12-31","n":2}' }, { value: '{"d":null,"n":3}' }]).outputValues('out')).toEqual([
      '{"d":"2026-12-31","next_day":"2027-01-01","at_midnight":"2026-12-31 00:00:00"}',
    ]);
    expect(run(script('csv'), [{ value: '2026-2-8,1' }, { value: '1969-12-31,2' }]).outputValues('out')).toEqual(['2026-02-08,2026-02-09,"2026-02-08 00:00:00"']);
    expect(() => run(script('json'), [{ value: '{"d":"2026-2-8","n":1}' }])).toThrow(/^Record in\/0@0: days failed: table days cannot read the record: the field "d": "2026-2-8" is not a DATE/);
    expect(() => run(script('csv'), [{ value: '2026-02-30,1' }])).toThrow(/"2026-02-30" is not a DATE/);
  });

  it('run every INSERT of a statement set, and a view in each', () => {
    const harness = run(
      `${READINGS}
CREATE TABLE high (sensor STRING) WITH ('connector' = 'kafka', 'topic' = 'high', ${BROKERS}, 'format' = 'json');
CREATE TABLE low (sensor STRING) WITH ('connector' = 'kafka', 'topic' = 'low', ${BROKERS}, 'format' = 'json');
CREATE VIEW named AS SELECT sensor, reading FROM readings WHERE sensor IS NOT NULL;
EXECUTE STATEMENT SET BEGIN
  INSERT INTO high SELECT sensor FROM named WHERE reading >= 10;
  INSERT INTO low SELECT sensor FROM named WHERE reading < 10;
END;`,
      [{ value: '{"sensor":"a","reading":1,"at_ms":1}' }, { value: '{"sensor":"b","reading":20,"at_ms":2}' }, { value: '{"reading":30,"at_ms":3}' }],
    );
    expect([harness.outputValues('high'), harness.outputValues('low')]).toEqual([['{"sensor":"b"}'], ['{"sensor":"a"}']]);
  });

  it('write an updating aggregation to upsert-kafka: each key its latest row, exactly what Flink\'s final table holds', () => {
    const harness = run(
      `${READINGS}
CREATE TABLE latest (sensor STRING, readings BIGINT, total DECIMAL(38, 2), PRIMARY KEY (sensor) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'latest', ${BROKERS}, 'key.format' = 'raw', 'value.format' = 'json');
INSERT INTO latest SELECT sensor, COUNT(*), SUM(reading) FROM readings GROUP BY sensor;`,
      [
        { value: '{"sensor":"a","reading":1,"at_ms":1}' },
        { value: '{"sensor":"b","reading":2,"at_ms":2}' },
        { value: '{"sensor":"a","reading":3,"at_ms":3}' },
      ],
    );
    // +I a, +I b, then -U a (not written) and +U a.
    expect(harness.output('latest').map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString() ?? 'null'}`)).toEqual([
      'a {"sensor":"a","readings":1,"total":1.00}',
      'b {"sensor":"b","readings":1,"total":2.00}',
      'a {"sensor":"a","readings":2,"total":4.00}',
    ]);
  });

  it('read an upsert-kafka table as its changelog: a new key inserts, a changed row updates, an equal one changes nothing, a tombstone deletes', () => {
    const harness = run(
      `CREATE TABLE users (id STRING, region STRING, score INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'key.format' = 'raw', 'value.format' = 'json');
CREATE TABLE per_region (region STRING, users BIGINT, total INT, PRIMARY KEY (region) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'out', ${BROKERS}, 'key.format' = 'raw', 'value.format' = 'json');
INSERT INTO per_region SELECT region, COUNT(*), SUM(score) FROM users GROUP BY region;`,
      [
        { key: 'u1', value: '{"id":"u1","region":"eu","score":1}' },
        { key: 'u2', value: '{"id":"u2","region":"eu","score":2}' },
        // u1 moves: -U of its eu row, +U of its us row.
        { key: 'u1', value: '{"id":"u1","region":"us","score":5}' },
        { key: 'u2', value: '{"id":"u2","region":"eu","score":2}' },
        { key: 'u2', value: null },
        { key: 'u3', value: null },
      ],
    );
    expect(harness.output('out').map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString() ?? 'null'}`)).toEqual([
      'eu {"region":"eu","users":1,"total":1}',
      'eu {"region":"eu","users":2,"total":3}',
      'eu {"region":"eu","users":1,"total":2}',
      'us {"region":"us","users":1,"total":5}',
      'eu null',
    ]);
  });

  it('delete a key from an upsert sink when a filter drops the new row of its update', () => {
    const harness = run(
      `CREATE TABLE users (id STRING, score INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'key.format' = 'raw', 'value.format' = 'json');
CREATE TABLE high (id STRING, score INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'out', ${BROKERS}, 'key.format' = 'raw', 'value.format' = 'json');
INSERT INTO high SELECT id, score FROM users WHERE score > 3;`,
      [
        { key: 'u1', value: '{"id":"u1","score":5}' },
        { key: 'u1', value: '{"id":"u1","score":2}' },
        { key: 'u2', value: '{"id":"u2","score":4}' },
        { key: 'u2', value: '{"id":"u2","score":6}' },
      ],
    );
    expect(harness.output('out').map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString() ?? 'null'}`)).toEqual([
      'u1 {"id":"u1","score":5}',
      'u1 null',
      'u2 {"id":"u2","score":4}',
      'u2 null',
      'u2 {"id":"u2","score":6}',
    ]);
  });

  it('read an upsert-kafka key in JSON, EXCEPT_KEY, and refuse a record without a key', () => {
    const table = `CREATE TABLE prices (sku STRING, shop STRING, price INT, PRIMARY KEY (sku, shop) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'key.format' = 'json',
        'value.fields-include' = 'EXCEPT_KEY', 'value.format' = 'json');
CREATE TABLE out (sku STRING, shop STRING, price INT, PRIMARY KEY (sku, shop) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'out', ${BROKERS}, 'key.format' = 'json', 'value.format' = 'json');
INSERT INTO out SELECT sku, shop, price * 2 FROM prices WHERE price > 1;`;
    const harness = run(table, [
      { key: '{"sku":"a","shop":"x"}', value: '{"price":3}' },
      { key: '{"sku":"a","shop":"y"}', value: '{"price":1}' },
      { key: '{"sku":"a","shop":"x"}', value: null },
    ]);
    expect(harness.output('out').map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString() ?? 'null'}`)).toEqual([
      '{"sku":"a","shop":"x"} {"sku":"a","shop":"x","price":6}',
      '{"sku":"a","shop":"x"} null',
    ]);
    expect(() => run(table, [{ value: '{"price":3}' }])).toThrow(/table prices cannot read the record: the record has no key, which an upsert-kafka table reads its PRIMARY KEY from/);
  });

  it("read and write the 'raw' format: the value's text as one STRING column, a tombstone as NULL", () => {
    const harness = run(
      `CREATE TABLE lines (line STRING, at TIMESTAMP_LTZ(3) METADATA FROM 'timestamp')
  WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'raw');
CREATE TABLE shouted (line STRING) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'raw');
INSERT INTO shouted SELECT CASE WHEN line IS NULL THEN NULL ELSE UPPER(line) END FROM lines;`,
      [{ value: 'héllo, {not json}', timestamp: 5_000 }, { value: null, timestamp: 6_000 }],
    );
    expect(harness.output('out').map((record) => record.value?.toString('utf8') ?? null)).toEqual(['HÉLLO, {NOT JSON}', null]);
    expect(() => sqlPipeline(`CREATE TABLE two (a STRING, b STRING) WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'format' = 'raw');
CREATE TABLE out (a STRING) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
INSERT INTO out SELECT a FROM two;`, { name: 'raw' })).toThrow("the 'raw' format holds one STRING column in the value: declare one (or use 'json')");
  });

  it("read and write the 'csv' format by position, with its options, naming a record it cannot read and skipping it under csv.ignore-parse-errors", () => {
    const script = (options: string) => `CREATE TABLE trades (symbol STRING, qty INT, price DECIMAL(8, 2), at TIMESTAMP(3))
  WITH ('connector' = 'kafka', 'topic' = 'in', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'csv'${options});
CREATE TABLE notional (symbol STRING, amount DECIMAL(18, 2), at TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS},
  'format' = 'csv', 'csv.field-delimiter' = '|', 'csv.null-literal' = 'n/a');
INSERT INTO notional SELECT symbol, qty * price, at FROM trades;`;
    const trades = [{ value: '"ACME, Inc.",3,10.50,2026-12-07 10:00:00.25' }, { value: 'XYZ,many,1.00,2026-12-07 10:00:01' }, { value: 'Q,,,2026-12-07 10:00:02' }];
    expect(() => run(script(''), trades)).toThrow(/^Record in\/0@1: trades failed: table trades cannot read the record: the field qty: "many" is not a INT \(set 'csv.ignore-parse-errors' = 'true' to skip such records\)/);
    const lenient = run(script(", 'csv.ignore-parse-errors' = 'true'"), trades);
    // As Jackson quotes for Flink: any text with a character below the delimiter's, as '|' makes every letter.
    expect(lenient.outputValues('out')).toEqual(['"ACME, Inc."|31.50|"2026-12-07 10:00:00.25"', '"XYZ"|n/a|"2026-12-07 10:00:01"', '"Q"|n/a|"2026-12-07 10:00:02"']);
    expect(() => sqlPipeline(script(", 'csv.field-delimiter' = ';;'"), { name: 'csv' })).toThrow("'csv.field-delimiter' must be one character, not ';;'");
    expect(() => sqlPipeline(script(", 'csv.quote-character' = '''', 'csv.disable-quote-character' = 'true'"), { name: 'csv' })).toThrow(
      "'csv.quote-character' and 'csv.disable-quote-character' = 'true' cannot both be set",
    );
  });

  it("show TIMESTAMP_LTZ in the session's time zone", () => {
    const harness = run(
      `SET 'table.local-time-zone' = 'Asia/Kolkata';
${READINGS}
CREATE TABLE out (local_time STRING, wall TIMESTAMP(3)) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
INSERT INTO out SELECT CAST(at AS STRING), CAST(at AS TIMESTAMP(3)) FROM readings;`,
      [{ value: '{"sensor":"a","reading":1,"at_ms":0}' }],
    );
    expect(harness.outputValues('out')).toEqual(['{"local_time":"1970-01-01 05:30:00.000","wall":"1970-01-01 05:30:00"}']);
  });
});
