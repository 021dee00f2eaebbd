// Top-N and deduplication into upsert-kafka tables, through the whole pipeline harness: the
// table compacted by key is the query's final table, and the plan names each strategy.
import { describe, expect, it } from 'vitest';
import { describePlan } from '../../../lib/plan/explain.js';
import { sqlPipeline, SqlUnsupportedError } from '../../../lib/sql/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

const BROKERS = "'properties.bootstrap.servers' = '127.0.0.1:9092'";

const BIDS = `CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, at_ms BIGINT, at AS TO_TIMESTAMP_LTZ(at_ms, 3), WATERMARK FOR at AS at)
  WITH ('connector' = 'kafka', 'topic' = 'bids', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
`;

const upsertTable = (name: string, columns: string, key: string) =>
  `CREATE TABLE ${name} (${columns}, PRIMARY KEY (${key}) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '${name}', ${BROKERS}, 'key.format' = 'json', 'value.format' = 'json');\n`;

function run(script: string, bids: readonly [auction: number, bidder: number, price: number, at: number][]): PipelineTestHarness {
  const harness = new PipelineTestHarness(sqlPipeline(script, { name: 'ranking' }), { sourcePartitions: { bids: [0] } });
  harness.send(
    'bids',
    bids.map(([auction, bidder, price, at]) => ({ value: JSON.stringify({ auction, bidder, price, at_ms: at }) })),
  );
  harness.finish();
  return harness;
}

/** The table an upsert topic leaves: each key's last value, tombstones removing it. */
function compacted(harness: PipelineTestHarness, topic: string): Record<string, string> {
  const table: Record<string, string> = {};
  for (const { key, value } of harness.output(topic)) {
    const id = key?.toString() ?? '';
    if (value === null) delete table[id];
    else table[id] = value.toString();
  }
  return table;
}

describe('SQL Top-N and deduplication', () => {
  it('write a Top-N with its rank to upsert-kafka keyed by the partition and the rank', () => {
    const harness = run(
      `${BIDS}${upsertTable('top_bids', 'auction BIGINT, price BIGINT, bidder BIGINT, rn BIGINT', 'auction, rn')}
INSERT INTO top_bids SELECT auction, price, bidder, rn FROM (
  SELECT auction, price, bidder, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids
) WHERE rn <= 2;`,
      [
        [1, 10, 5, 1_000],
        [1, 11, 8, 2_000],
        [2, 12, 3, 3_000],
        [1, 13, 6, 4_000],
        [1, 14, 8, 5_000],
      ],
    );
    expect(compacted(harness, 'top_bids')).toEqual({
      '{"auction":1,"rn":1}': '{"auction":1,"price":8,"bidder":11,"rn":1}',
      '{"auction":1,"rn":2}': '{"auction":1,"price":8,"bidder":14,"rn":2}',
      '{"auction":2,"rn":1}': '{"auction":2,"price":3,"bidder":12,"rn":1}',
    });
  });

  it("keep each bidder's last bid on an auction in upsert-kafka keyed by both, as Nexmark's q18 does", () => {
    const harness = run(
      `${BIDS}${upsertTable('last_bids', 'bidder BIGINT, auction BIGINT, price BIGINT', 'bidder, auction')}
INSERT INTO last_bids SELECT bidder, auction, price FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY at DESC) AS rank_number FROM bids
) WHERE rank_number <= 1;`,
      [
        [1, 10, 5, 1_000],
        [1, 10, 7, 3_000],
        [1, 10, 6, 2_000],
        [2, 10, 4, 2_000],
      ],
    );
    expect(compacted(harness, 'last_bids')).toEqual({
      '{"bidder":10,"auction":1}': '{"bidder":10,"auction":1,"price":7}',
      '{"bidder":10,"auction":2}': '{"bidder":10,"auction":2,"price":4}',
    });
  });

  it('refuse an upsert sink keyed otherwise, and a Top-N of more than one row without its rank into any sink', () => {
    const plan = (script: string) => () => sqlPipeline(`${BIDS}${script}`, { name: 'ranking' });
    expect(
      plan(`${upsertTable('top_bids', 'auction BIGINT, price BIGINT, rn BIGINT', 'auction')}
INSERT INTO top_bids SELECT auction, price, rn FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids) WHERE rn <= 2;`),
    ).toThrow(SqlUnsupportedError);
    expect(
      plan(`${upsertTable('top_bids', 'auction BIGINT, price BIGINT', 'auction')}
INSERT INTO top_bids SELECT auction, price FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids) WHERE rn <= 2;`),
    ).toThrow('INSERT INTO top_bids of the +I, -D changes the Top-N (ROW_NUMBER() <= 2) makes (toChangelogStream reads them) is not supported by Sluice yet');
    // With N = 1 each partition holds one row, which its key names: Nexmark's q9.
    expect(
      plan(`${upsertTable('top_bids', 'auction BIGINT, price BIGINT', 'auction')}
INSERT INTO top_bids SELECT auction, price FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids) WHERE rn <= 1;`)().getTransformations().some((node) => node.kind === 'sink'),
    ).toBe(true);
  });

  it('name the strategy, its range, keys, order and changelog in the plan', () => {
    const env = sqlPipeline(
      `${BIDS}CREATE TABLE firsts (auction BIGINT, bidder BIGINT) WITH ('connector' = 'kafka', 'topic' = 'firsts', ${BROKERS}, 'format' = 'json');
INSERT INTO firsts SELECT auction, bidder FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY at) AS rn FROM bids) WHERE rn = 1;`,
      { name: 'ranking' },
    );
    const harness = new PipelineTestHarness(env, { sourcePartitions: { bids: [0] } });
    const descriptions = describePlan(harness.plan).stages.flatMap((stage) => stage.operators.map((operator) => operator.description));
    expect(descriptions).toContain('Deduplicate(keep=[FirstRow], key=[auction], order=[ROWTIME], state=[the kept row per key]) [insert-only]');
  });
});
