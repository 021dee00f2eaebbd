// What a user sees when Sluice cannot run a statement: Flink's kind of message, with the line,
// the column and a caret, and "not supported yet" for what Flink has and Sluice does not.
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../../../lib/api/index.js';
import { sqlPipeline, SqlUnsupportedError, StreamTableEnvironment } from '../../../lib/sql/index.js';
import { sqlFailure } from '../../helpers/sql.js';

const EVENTS = `CREATE TABLE events (k STRING, v BIGINT, ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE sink (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json');
`;

describe('SQL errors', () => {
  it('name the line and column of a syntax error, with the line and a caret under the column', () => {
    const error = sqlFailure(`${EVENTS}INSERT INTO sink\nSELECT k, v FROM events WHERE;`);
    expect(error.message).toBe('SQL error at line 5, column 30: expected an expression, found ";"\nSELECT k, v FROM events WHERE;\n                             ^');
    expect(error.position).toMatchObject({ line: 5, column: 30 });
  });

  it('name a group window function given the wrong arguments, or a …_START of a window the query does not group by', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, COUNT(*) FROM events GROUP BY k, TUMBLE(ts);`).message).toContain(
      "TUMBLE in GROUP BY takes a time attribute and a size, as in TUMBLE(ts, INTERVAL '10' SECOND)",
    );
    expect(
      sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, TUMBLE_START(ts, INTERVAL '2' SECOND) FROM events GROUP BY k, TUMBLE(ts, INTERVAL '1' SECOND);`).message,
    ).toContain("TUMBLE_START names a window the query does not group by: give it GROUP BY's TUMBLE arguments");
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, COUNT(*) FROM events GROUP BY k, TUMBLE(v, INTERVAL '1' SECOND);`).message).toContain(
      "the window function's time column 'v' is not a time attribute",
    );
  });

  it('name an unknown column and list the ones there are', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, amount FROM events;`).message).toContain(
      "column 'amount' not found in any table; the columns are k, v, ts",
    );
  });

  it.each([
    ['MATCH_RECOGNIZE', 'SELECT * FROM events MATCH_RECOGNIZE (PARTITION BY k)'],
    ['a INNER JOIN without an equality between a column of each input (a cross join)', 'SELECT a.k, b.v FROM events a, events b WHERE a.v < b.v'],
    ['a NATURAL JOIN of inputs without a column in common (a cross join)', 'SELECT a.k FROM events a NATURAL JOIN (SELECT v * 2 AS w FROM events) b'],
    ['INSERT INTO sink of the +I, -D changes the LEFT JOIN makes (toChangelogStream reads them)', 'SELECT a.k, b.v FROM events a LEFT JOIN events b ON a.k = b.k'],
    ['an OVER aggregation in a grouped query', 'SELECT k, COUNT(*), SUM(COUNT(*)) OVER (ORDER BY k) FROM events GROUP BY k'],
    ['OVER aggregations', 'SELECT k FROM events WHERE SUM(v) OVER (PARTITION BY k ORDER BY ts) > 2'],
    ['ROW_NUMBER() without a WHERE rn <= N over it (an OVER aggregation rather than a Top-N)', 'SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM events) WHERE v > 1'],
    ['a Top-N over an aggregation (an updating input)', 'SELECT k, n FROM (SELECT k, COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY k) AS rn FROM events GROUP BY k) WHERE rn <= 3'],
    ['the SESSION window function outside a window aggregation', "SELECT * FROM TABLE(SESSION(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"],
    ['LIMIT over an updating result (of GROUP BY k)', 'SELECT k, COUNT(*) FROM events GROUP BY k LIMIT 3'],
    ['IN (subquery) other than a condition of WHERE, ANDed with the others', 'SELECT k, v FROM events WHERE v > 3 OR k IN (SELECT k FROM events)'],
    [
      "EXISTS other than over one table correlated by one equality between its column and the query's (r.y = q.x, each qualified)",
      'SELECT k, v FROM events e WHERE EXISTS (SELECT * FROM events b WHERE b.v > e.v)',
    ],
    ['the function LAG', 'SELECT LAG(v) FROM events'],
  ])('call %s not supported yet, where it stands, rather than a syntax error', (feature, query) => {
    const error = sqlFailure(`${EVENTS}INSERT INTO sink ${query};`);
    expect(error).toBeInstanceOf(SqlUnsupportedError);
    expect(error.message).toContain(`${feature} is not supported by Sluice yet`);
    expect(error.position?.line).toBe(4);
  });

  it("refuse an OVER window not ordered by the time attribute, or two different windows in one SELECT, with Flink's rule", () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v) FROM events;`).message).toContain(
      'an OVER window in a stream is ordered by one time attribute, ascending (ORDER BY its rowtime column), as in Flink',
    );
    expect(
      sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts) - MIN(v) OVER (ORDER BY ts) FROM events;`).message,
    ).toContain('every OVER aggregation of a SELECT must have the same window (PARTITION BY, ORDER BY and frame), as in Flink');
    // Flink 2.2: "OVER RANGE FOLLOWING windows are not supported yet."
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM events;`).message).toContain(
      'an OVER frame on a stream ends at the current row: FOLLOWING windows are not supported, in Flink either',
    );
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, COUNT(*) FILTER (WHERE v > 1) OVER (PARTITION BY k ORDER BY ts) FROM events;`).message).toContain(
      'FILTER does not apply to an OVER aggregation, in Flink either',
    );
  });

  it('name a USING column that an input lacks or holds twice, and reach each input\'s own by its table', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, 1 FROM events a JOIN (SELECT k AS j FROM events) b USING (k);`).message).toContain(
      "USING column 'k' is not a column of the right input",
    );
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, 1 FROM events a JOIN events b ON a.k = b.k JOIN events c USING (v);`).message).toContain(
      "USING column 'v' is ambiguous in the left input",
    );
    expect(sqlPipeline(`${EVENTS}INSERT INTO sink SELECT a.k, b.v FROM events a JOIN events b USING (k);`, { name: 'using' }).getTransformations().length).toBeGreaterThan(0);
  });

  it('need the subquery of IN to select one column', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events WHERE k IN (SELECT k, v FROM events);`).message).toContain('the subquery of IN must select one column, not 2');
  });

  it('refuse a LIMIT of no rows, a negative OFFSET or one without FETCH, and a sink the +I, -D changes of ORDER BY … LIMIT', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events LIMIT 2 OFFSET -1;`).message).toContain('OFFSET takes a whole number of rows, at least 0, not -');
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events ORDER BY ts OFFSET 2;`).message).toContain(
      'OFFSET without FETCH, which Flink does not run on a stream: add FETCH FIRST n ROWS ONLY after it',
    );
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events LIMIT 0;`).message).toContain('LIMIT takes a whole number of rows, at least 1, not 0');
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events FETCH FIRST 2.5 ROWS ONLY;`).message).toContain('FETCH takes a whole number of rows, at least 1, not 2.5');
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events ORDER BY v LIMIT 2;`).message).toContain(
      'INSERT INTO sink of the +I, -D changes ORDER BY … LIMIT 2 makes (toChangelogStream reads them) is not supported by Sluice yet',
    );
  });

  it("refuse an updating query into a kafka sink with Flink's reason, and say to use upsert-kafka", () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, COUNT(*) FROM events GROUP BY k;`).message).toContain(
      "table sink 'sink' doesn't support consuming update changes, which GROUP BY k produces: INSERT INTO a table with 'connector' = 'upsert-kafka'",
    );
  });

  it('need upsert-kafka tables keyed by what the query groups by', () => {
    const upsert = (key: string) =>
      `${EVENTS}CREATE TABLE counts (k STRING, n BIGINT, PRIMARY KEY (${key}) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'counts', ` +
      "'properties.bootstrap.servers' = '127.0.0.1:9092', 'key.format' = 'json', 'value.format' = 'json');\nINSERT INTO counts SELECT k, COUNT(*) FROM events GROUP BY k;";
    expect(sqlPipeline(upsert('k'), { name: 'upserts' }).getTransformations().some((node) => node.kind === 'sink')).toBe(true);
    expect(sqlFailure(upsert('n'))).toBeInstanceOf(SqlUnsupportedError);
    expect(sqlFailure(upsert('k').replace(", PRIMARY KEY (k) NOT ENFORCED", '')).message).toContain("an 'upsert-kafka' table needs a PRIMARY KEY (…) NOT ENFORCED");
  });

  it('need a versioned table keyed by the ON equalities, read at the probe side\'s time attribute, for FOR SYSTEM_TIME AS OF', () => {
    const rates = `${EVENTS}CREATE VIEW rates AS SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM events) WHERE rn = 1;
`;
    const join = (right: string, on = 'o.k = r.k', asOf = 'o.ts') => `INSERT INTO sink SELECT o.k, r.v FROM events AS o JOIN ${right} FOR SYSTEM_TIME AS OF ${asOf} AS r ON ${on};`;
    expect(sqlPipeline(`${rates}${join('rates')}`, { name: 'temporal' }).getTransformations().some((node) => node.kind === 'sink')).toBe(true);
    expect(sqlFailure(`${rates}${join('events')}`).message).toContain(
      "events is not a versioned table, which FOR SYSTEM_TIME AS OF reads: make it a view that keeps each key's last row by its time attribute",
    );
    expect(sqlFailure(`${rates}${join('rates', 'o.v = r.v')}`).message).toContain(
      "a temporal join's ON must equate every column of rates's key (k) with the probe side; it leaves out k",
    );
    expect(sqlFailure(`${rates}${join('rates', 'o.k = r.k', 'r.ts')}`)).toBeInstanceOf(SqlUnsupportedError);
    expect(sqlFailure(`${rates}${join('rates').replace('JOIN', 'RIGHT JOIN')}`).message).toContain('a temporal join is INNER or LEFT, not RIGHT');
  });

  it("refuse ORDER BY that does not start with the time attribute ascending, with Flink's message", () => {
    for (const order of ['k', 'ts DESC', 'v, ts']) {
      expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events ORDER BY ${order};`).message).toContain(
        'Sort on a non-time-attribute field is not supported: ORDER BY the time attribute, ascending, first, as in Flink',
      );
    }
  });

  it('say CREATE FUNCTION is not supported yet', () => {
    expect(sqlFailure("CREATE FUNCTION f AS 'x'")).toBeInstanceOf(SqlUnsupportedError);
  });

  it("refuse types Flink does not mix, saying to CAST", () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, v FROM events WHERE k = 1;`).message).toContain(
      'the comparison = has operands of types STRING and INT NOT NULL, which Flink does not mix: CAST one of them',
    );
  });

  it('refuse a DATE cast to a number, an EXTRACT, FLOOR or TIMESTAMPDIFF unit there is not, a DATE literal that is no date, a fraction of a month, and operands of two time types, where each stands', () => {
    const failure = (select: string) => sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, ${select} FROM events;`).message;
    expect(failure('CAST(CAST(ts AS DATE) AS BIGINT)')).toContain('CAST from DATE to BIGINT is not supported');
    expect(failure('EXTRACT(MILLENNIUM FROM ts)')).toContain('EXTRACT takes YEAR, QUARTER, MONTH, WEEK, DAY, DOY, DOW, HOUR, MINUTE, SECOND, not MILLENNIUM');
    expect(failure("YEAR(DATE '2026-02-30')")).toContain("'2026-02-30' is not a date: write it as 'yyyy-MM-dd'");
    expect(failure("YEAR(CAST(ts AS DATE) + INTERVAL '1.5' MONTH)")).toContain('a MONTH interval counts whole months, not 1.5');
    expect(failure('TIMESTAMPDIFF(FORTNIGHT, ts, ts)')).toContain('TIMESTAMPDIFF takes YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, not FORTNIGHT');
    expect(failure('FLOOR(ts TO FORTNIGHT)')).toContain('FLOOR … TO takes YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, not FORTNIGHT');
    expect(failure('TIMESTAMPDIFF(DAY, ts, CAST(ts AS TIMESTAMP(3)))')).toContain("TIMESTAMPDIFF's operands are TIMESTAMP_LTZ(3) *ROWTIME* and TIMESTAMP(3): CAST one to the other's type");
    expect(failure("COUNT(*) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MONTH)) GROUP BY k, window_start, window_end; --")).toContain('a window function takes INTERVAL literals');
  });

  it('check INSERT INTO against the sink, column by column', () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT v, k FROM events;`).message).toContain(
      'column types of the query and sink do not match: column 1 (k) takes STRING, and the query gives BIGINT; CAST it',
    );
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k FROM events;`).message).toContain('the query has 1 columns and sink takes 2 (k, n)');
  });

  it("bound an interval's leading field to two digits, as Flink does", () => {
    expect(sqlFailure(`${EVENTS}INSERT INTO sink SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '100' SECOND)) GROUP BY k, window_start, window_end;`).message).toContain(
      'interval field value 100 exceeds precision of SECOND(2) field: write SECOND(3)',
    );
  });

  it('need a time attribute for a window function', () => {
    const script = EVENTS.replace(", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND", '');
    expect(sqlFailure(`${script}INSERT INTO sink SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end;`).message).toContain(
      "the window function's time column 'ts' is not a time attribute: declare WATERMARK FOR ts in its table",
    );
  });

  it("list a connector's options when one is unknown, and name what a table lacks", () => {
    expect(sqlFailure(EVENTS.replace("'format' = 'json')", "'format' = 'json', 'scan.parallelism' = '2')") + 'INSERT INTO sink SELECT k, v FROM events;').message).toContain(
      "table events: unsupported option 'scan.parallelism' for the kafka connector",
    );
    expect(sqlFailure(EVENTS.replace("'properties.group.id' = 'g', ", '') + 'INSERT INTO sink SELECT k, v FROM events;').message).toContain(
      "table events: needs 'properties.group.id' (the consumer group the pipeline's trigger reads with)",
    );
    expect(sqlFailure(EVENTS.replace("'connector' = 'kafka', 'topic' = 'out'", "'connector' = 'upsert-kafka', 'topic' = 'out'") + 'INSERT INTO sink SELECT k, v FROM events;').message).toContain(
      "table sink: unsupported option 'format' for the upsert-kafka connector",
    );
  });

  it('say how to set what an exactly-once sink needs', () => {
    const script = EVENTS.replace("'format' = 'json');\n\n", '').replace(
      "CREATE TABLE sink (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json');",
      "CREATE TABLE sink (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once');",
    );
    expect(sqlFailure(`${script}INSERT INTO sink SELECT k, v FROM events;`).message).toContain("needs 'sink.transactional-id-prefix'");
    const prefixed = script.replace("'exactly-once')", "'exactly-once', 'sink.transactional-id-prefix' = 'tx')");
    expect(() => sqlPipeline(`${prefixed}INSERT INTO sink SELECT k, v FROM events;`, { name: 'eo' })).toThrow(
      "SET 'execution.checkpointing.interval' = '1 min';",
    );
    expect(sqlPipeline(`SET 'execution.checkpointing.interval' = '30 s';\n${prefixed}INSERT INTO sink SELECT k, v FROM events;`, { name: 'eo' }).getCheckpointConfig().checkpointInterval).toBe(30_000);
  });

  it('refuse a SET key Sluice does not read, naming those it does', () => {
    expect(sqlFailure("SET 'table.exec.mini-batch.enabled' = 'true'").message).toContain("SET 'table.exec.mini-batch.enabled' is not a key Sluice reads");
  });

  it('tell a SELECT alone that a pipeline needs a sink', () => {
    const tableEnv = StreamTableEnvironment.create(StreamExecutionEnvironment.create({ name: 'select' }));
    expect(() => tableEnv.executeSql(`${EVENTS}SELECT k FROM events`)).toThrow('a SELECT on its own has nowhere to go in a pipeline');
  });
});
