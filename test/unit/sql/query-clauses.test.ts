// SELECT DISTINCT, set operations, WITH and OVER through the whole pipeline harness: what each writes to Kafka, and
// what each refuses. test/conformance's sql-select-distinct, sql-union-distinct, sql-intersect*, sql-except*, sql-with and sql-over-* hold them to Flink.
import { describe, expect, it } from 'vitest';
import { sqlPipeline, SqlUnsupportedError } from '../../../lib/sql/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';
import { sqlFailure } from '../../helpers/sql.js';

const BROKERS = "'properties.bootstrap.servers' = '127.0.0.1:9092'";

const BIDS = `CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, at_ms BIGINT, at AS TO_TIMESTAMP_LTZ(at_ms, 3), WATERMARK FOR at AS at)
  WITH ('connector' = 'kafka', 'topic' = 'bids', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
`;

const kafkaTable = (name: string, columns: string) => `CREATE TABLE ${name} (${columns}) WITH ('connector' = 'kafka', 'topic' = '${name}', ${BROKERS}, 'format' = 'json');\n`;
const upsertTable = (name: string, columns: string, key: string) =>
  `CREATE TABLE ${name} (${columns}, PRIMARY KEY (${key}) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '${name}', ${BROKERS}, 'key.format' = 'json', 'value.format' = 'json');\n`;

type Bid = [auction: number, bidder: number, price: number, at: number];

const BIDS_SENT: Bid[] = [
  [1, 10, 5, 1_000],
  [1, 11, 8, 2_000],
  [2, 10, 3, 3_000],
  [1, 10, 6, 4_000],
  [2, 12, 9, 12_000],
  [1, 11, 2, 13_000],
];

function run(script: string, bids: readonly Bid[] = BIDS_SENT): PipelineTestHarness {
  const harness = new PipelineTestHarness(sqlPipeline(script, { name: 'query-clauses' }), { sourcePartitions: { bids: [0] } });
  harness.send(
    'bids',
    bids.map(([auction, bidder, price, at]) => ({ value: JSON.stringify({ auction, bidder, price, at_ms: at }) })),
  );
  harness.finish();
  return harness;
}

const values = (harness: PipelineTestHarness, topic: string) => harness.output(topic).map(({ key, value }) => [key?.toString() ?? null, value?.toString() ?? null]);

describe('SELECT DISTINCT', () => {
  it('writes each combination of values once, the first time it is seen, to upsert-kafka keyed by them', () => {
    const harness = run(`${BIDS}${upsertTable('pairs', 'auction BIGINT, bidder BIGINT', 'auction, bidder')}
INSERT INTO pairs SELECT DISTINCT auction, bidder FROM bids;`);
    expect(values(harness, 'pairs')).toEqual([
      ['{"auction":1,"bidder":10}', '{"auction":1,"bidder":10}'],
      ['{"auction":1,"bidder":11}', '{"auction":1,"bidder":11}'],
      ['{"auction":2,"bidder":10}', '{"auction":2,"bidder":10}'],
      ['{"auction":2,"bidder":12}', '{"auction":2,"bidder":12}'],
    ]);
  });

  it("is refused into a kafka sink with Flink's reason, as a GROUP BY is", () => {
    expect(sqlFailure(`${BIDS}${kafkaTable('pairs', 'auction BIGINT, bidder BIGINT')}INSERT INTO pairs SELECT DISTINCT auction, bidder FROM bids;`).message).toContain(
      "table sink 'pairs' doesn't support consuming update changes, which SELECT DISTINCT produces",
    );
  });
});

describe('Set operations', () => {
  it('EXCEPT writes a row while the second input lacks it, and deletes it from upsert-kafka when the second input gives it', () => {
    const harness = run(`${BIDS}${upsertTable('quiet', 'auction BIGINT', 'auction')}
INSERT INTO quiet SELECT auction FROM bids EXCEPT SELECT auction FROM bids WHERE price > 8;`);
    expect(values(harness, 'quiet')).toEqual([
      ['{"auction":1}', '{"auction":1}'],
      ['{"auction":2}', '{"auction":2}'],
      ['{"auction":2}', null],
    ]);
  });

  it('INTERSECT writes a row once every input holds it; INTERSECT binds before UNION', () => {
    const harness = run(`${BIDS}${upsertTable('both', 'bidder BIGINT', 'bidder')}${upsertTable('either', 'auction BIGINT', 'auction')}
INSERT INTO both SELECT bidder FROM bids WHERE auction = 2 INTERSECT SELECT bidder FROM bids WHERE price > 4;
INSERT INTO either SELECT auction FROM bids WHERE price > 100 UNION SELECT auction FROM bids WHERE bidder = 12 INTERSECT SELECT auction FROM bids WHERE price = 9;`);
    expect(values(harness, 'both')).toEqual([
      ['{"bidder":10}', '{"bidder":10}'],
      ['{"bidder":12}', '{"bidder":12}'],
    ]);
    expect(values(harness, 'either')).toEqual([['{"auction":2}', '{"auction":2}']]);
  });

  it("is refused into a kafka sink with Flink's reason, and refuses inputs of unlike widths, MINUS, and ORDER BY before the operator", () => {
    const sink = kafkaTable('out', 'auction BIGINT');
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out SELECT auction FROM bids UNION SELECT bidder FROM bids;`).message).toContain(
      "table sink 'out' doesn't support consuming update changes, which UNION produces",
    );
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out SELECT auction FROM bids INTERSECT SELECT auction, bidder FROM bids;`).message).toContain(
      "INTERSECT's inputs have 1 and 2 columns; they need the same number",
    );
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out SELECT auction FROM bids MINUS SELECT bidder FROM bids;`).message).toContain('MINUS (write EXCEPT) is not supported');
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out SELECT auction FROM bids ORDER BY at EXCEPT SELECT bidder FROM bids;`).message).toContain(
      'EXCEPT after ORDER BY or LIMIT: put the sorted query in parentheses',
    );
  });
});

describe('WITH', () => {
  it('reads its tables in order, each from the ones before, into a window aggregation over the last', () => {
    const harness = run(`${BIDS}${kafkaTable('totals', 'auction BIGINT, window_start TIMESTAMP_LTZ(3), total BIGINT')}
INSERT INTO totals
WITH cheap AS (SELECT auction, price, at FROM bids WHERE price < 9),
  firstTwo AS (SELECT * FROM cheap WHERE auction <= 2)
SELECT auction, window_start, SUM(price) FROM TABLE(TUMBLE(TABLE firstTwo, DESCRIPTOR(at), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;`);
    expect(values(harness, 'totals').map(([, value]) => JSON.parse(value ?? 'null') as unknown)).toEqual([
      { auction: 1, window_start: '1970-01-01 00:00:00Z', total: 19 },
      { auction: 2, window_start: '1970-01-01 00:00:00Z', total: 3 },
      { auction: 1, window_start: '1970-01-01 00:00:10Z', total: 2 },
    ]);
  });

  it('plans a table named twice once for each, as two subqueries', () => {
    const harness = run(`${BIDS}${kafkaTable('prices', 'price BIGINT')}
INSERT INTO prices WITH high AS (SELECT price FROM bids WHERE price > 5) SELECT price FROM high UNION ALL SELECT price * 100 FROM high AS h WHERE h.price > 8;`);
    expect(values(harness, 'prices').map(([, value]) => value)).toEqual(expect.arrayContaining(['{"price":8}', '{"price":6}', '{"price":9}', '{"price":900}']));
    expect(harness.output('prices')).toHaveLength(4);
  });

  it('names its table where a view or a catalog table of that name would be', () => {
    const harness = run(`${BIDS}${kafkaTable('out', 'auction BIGINT')}
CREATE VIEW bidsOfOne AS WITH bids AS (SELECT * FROM bids WHERE auction = 1) SELECT auction FROM bids;
INSERT INTO out SELECT auction FROM bidsOfOne;`);
    expect(harness.output('out')).toHaveLength(4);
  });

  it('refuses column names after its table, a table named twice, and a table read before it is named', () => {
    const sink = kafkaTable('out', 'auction BIGINT');
    const columns = sqlFailure(`${BIDS}${sink}INSERT INTO out WITH a (x) AS (SELECT auction FROM bids) SELECT x FROM a;`);
    expect(columns).toBeInstanceOf(SqlUnsupportedError);
    expect(columns.message).toContain('WITH a (column names) (name the columns in its SELECT instead) is not supported by Sluice yet');
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out WITH a AS (SELECT auction FROM bids), A AS (SELECT auction FROM bids) SELECT auction FROM a;`).message).toContain(
      "WITH names 'A' twice",
    );
    expect(sqlFailure(`${BIDS}${sink}INSERT INTO out WITH a AS (SELECT auction FROM b), b AS (SELECT auction FROM bids) SELECT auction FROM a;`).message).toContain(
      "object 'b' not found",
    );
  });
});

describe('OVER aggregations', () => {
  const lastTwo = 'PARTITION BY auction ORDER BY at ROWS BETWEEN 1 PRECEDING AND CURRENT ROW';
  it.each([
    ['written in each OVER', `COUNT(*) OVER (${lastTwo}), price * 100 / SUM(price) OVER (${lastTwo}) FROM bids`],
    ["named in the SELECT's WINDOW clause", `COUNT(*) OVER w, price * 100 / SUM(price) OVER w FROM bids WINDOW w AS (${lastTwo})`],
  ])("write each bid with its auction's last two bids' count and its share of their prices, once the watermark passes it: the window %s", (_, query) => {
    const harness = run(`${BIDS}${kafkaTable('shares', 'auction BIGINT, price BIGINT, n BIGINT, share BIGINT')}
INSERT INTO shares SELECT auction, price, ${query};`);
    expect(values(harness, 'shares').map(([, value]) => value)).toEqual([
      '{"auction":1,"price":5,"n":1,"share":100}',
      '{"auction":1,"price":8,"n":2,"share":61}',
      '{"auction":2,"price":3,"n":1,"share":100}',
      '{"auction":1,"price":6,"n":2,"share":42}',
      '{"auction":2,"price":9,"n":2,"share":75}',
      '{"auction":1,"price":2,"n":2,"share":25}',
    ]);
  });

  it('refuse OVER a window the WINDOW clause does not define', () => {
    expect(sqlFailure(`${BIDS}${kafkaTable('shares', 'auction BIGINT, n BIGINT')}INSERT INTO shares SELECT auction, COUNT(*) OVER v FROM bids WINDOW w AS (${lastTwo});`).message).toContain(
      "OVER v names no window: define it in the SELECT's WINDOW clause",
    );
  });
});
