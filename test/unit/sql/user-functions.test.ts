// User-defined scalar functions (createTemporarySystemFunction) and HOUR, MINUTE and SECOND,
// through the whole pipeline harness: what a query calls them with, what they return, and how
// a wrong declaration, call or result fails.
import { describe, expect, it } from 'vitest';
import { BadRecordPolicy, StreamExecutionEnvironment } from '../../../lib/api/index.js';
import { SqlError, SqlUnsupportedError, StreamTableEnvironment, type ScalarFunction } from '../../../lib/sql/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

const BROKERS = "'properties.bootstrap.servers' = '127.0.0.1:9092'";
const TABLES = `CREATE TABLE notes (id BIGINT, body STRING, stars INT, at_ms BIGINT, at AS CAST(TO_TIMESTAMP_LTZ(at_ms, 3) AS TIMESTAMP(3)))
  WITH ('connector' = 'kafka', 'topic' = 'notes', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE out (id BIGINT, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', ${BROKERS}, 'format' = 'json');
`;

const countChar: ScalarFunction = {
  argumentTypes: ['STRING', 'STRING'],
  resultType: 'BIGINT',
  eval: (text, char) => (text === null || char === null ? null : String(text).split(String(char)).length - 1),
};

function pipeline(insert: string, register: (tableEnv: StreamTableEnvironment) => void, policy = BadRecordPolicy.fail()) {
  const env = StreamExecutionEnvironment.create({ name: 'udf' }).setBadRecordPolicy(policy);
  const tableEnv = StreamTableEnvironment.create(env);
  register(tableEnv);
  tableEnv.executeSql(`${TABLES}${insert}`);
  return env;
}

function run(env: StreamExecutionEnvironment, notes: readonly Record<string, unknown>[]): PipelineTestHarness {
  const harness = new PipelineTestHarness(env, { sourcePartitions: { notes: [0] } });
  harness.send('notes', notes.map((note) => ({ value: JSON.stringify(note) })));
  harness.finish();
  return harness;
}

const values = (harness: PipelineTestHarness, topic: string) => harness.output(topic).map(({ value }) => value?.toString());

describe('user-defined scalar functions', () => {
  it('are called per row with the arguments, shadow nothing they do not name, and may return NULL', () => {
    const env = pipeline("INSERT INTO out SELECT id, COUNT_CHAR(body, 'a') FROM notes;", (t) => t.createTemporarySystemFunction('count_char', countChar));
    const harness = run(env, [
      { id: 1, body: 'banana' },
      { id: 2, body: 'kiwi' },
      { id: 3, body: null },
    ]);
    expect(values(harness, 'out')).toEqual(['{"id":1,"n":3}', '{"id":2,"n":0}', '{"id":3,"n":null}']);
  });

  it('widen an argument to the declared type as Flink widens numbers, and refuse one that would need a CAST', () => {
    const twice: ScalarFunction = { argumentTypes: ['BIGINT'], resultType: 'BIGINT', eval: (n) => (n === null ? null : Number(n) * 2) };
    const env = pipeline('INSERT INTO out SELECT id, twice(stars) FROM notes;', (t) => t.createTemporarySystemFunction('twice', twice));
    expect(values(run(env, [{ id: 1, stars: 21 }]), 'out')).toEqual(['{"id":1,"n":42}']);
    expect(() => pipeline('INSERT INTO out SELECT id, twice(body) FROM notes;', (t) => t.createTemporarySystemFunction('twice', twice))).toThrow(
      /twice\(STRING\) does not match twice\(BIGINT\): CAST the arguments to its types/,
    );
  });

  it('shadow a built-in function of the same name, as a temporary system function does in Flink', () => {
    const upper: ScalarFunction = { argumentTypes: ['STRING'], resultType: 'BIGINT', eval: (s) => String(s).length };
    const env = pipeline('INSERT INTO out SELECT id, UPPER(body) FROM notes;', (t) => t.createTemporarySystemFunction('upper', upper));
    expect(values(run(env, [{ id: 1, body: 'abc' }]), 'out')).toEqual(['{"id":1,"n":3}']);
  });

  it('make a result of the wrong type, or an exception, a bad record naming the function and its arguments', () => {
    const wrong: ScalarFunction = { argumentTypes: ['STRING'], resultType: 'BIGINT', eval: (s) => (s === 'boom' ? (() => { throw new Error('no boom'); })() : String(s)) };
    const env = pipeline('INSERT INTO out SELECT id, wrong(body) FROM notes;', (t) => t.createTemporarySystemFunction('wrong', wrong), BadRecordPolicy.deadLetter('notes-dlq'));
    const harness = run(env, [
      { id: 1, body: 'seven' },
      { id: 2, body: 'boom' },
    ]);
    expect(values(harness, 'out')).toEqual([]);
    const errors = harness.deadLetterRecords().map((record) => record.headers?.find((h) => h.key === 'sluice.error')?.value.toString());
    expect(errors).toEqual([
      expect.stringMatching(/wrong returned "seven", which is not a BIGINT: return one, or declare the resultType it returns/),
      expect.stringMatching(/wrong\("boom"\) threw: no boom/),
    ]);
  });

  it('refuse a registration that names no SQL type or registers a name twice, at once', () => {
    const tableEnv = StreamTableEnvironment.create(StreamExecutionEnvironment.create({ name: 'udf' }));
    expect(() => tableEnv.createTemporarySystemFunction('f', { ...countChar, resultType: 'LONG' })).toThrow(
      "createTemporarySystemFunction('f', …): the result type 'LONG' is not a type Sluice SQL has",
    );
    tableEnv.createTemporarySystemFunction('count_char', countChar);
    expect(() => tableEnv.createTemporarySystemFunction('COUNT_CHAR', countChar)).toThrow('a function named COUNT_CHAR is registered already');
  });

  it('are not what CREATE FUNCTION registers: a script says to register one in TypeScript', () => {
    const tableEnv = StreamTableEnvironment.create(StreamExecutionEnvironment.create({ name: 'udf' }));
    expect(() => tableEnv.executeSql("CREATE FUNCTION count_char AS 'com.example.CountChar'")).toThrow(SqlUnsupportedError);
    expect(() => tableEnv.executeSql("CREATE FUNCTION count_char AS 'com.example.CountChar'")).toThrow(/tableEnv\.createTemporarySystemFunction/);
  });
});

describe('HOUR, MINUTE and SECOND', () => {
  it("give a TIMESTAMP's wall-clock fields as BIGINT", () => {
    const env = pipeline('INSERT INTO out SELECT id, HOUR(at) * 10000 + MINUTE(at) * 100 + SECOND(at) FROM notes;', () => undefined);
    // 2026-12-07T23:59:58Z and 1969-12-31T22:30:15Z (before the epoch).
    const harness = run(env, [
      { id: 1, at_ms: Date.UTC(2026, 11, 7, 23, 59, 58) },
      { id: 2, at_ms: Date.UTC(1969, 11, 31, 22, 30, 15) },
    ]);
    expect(values(harness, 'out')).toEqual(['{"id":1,"n":235958}', '{"id":2,"n":223015}']);
  });

  it('refuse an argument that is not a timestamp', () => {
    expect(() => pipeline('INSERT INTO out SELECT id, HOUR(body) FROM notes;', () => undefined)).toThrow(SqlError);
  });
});
