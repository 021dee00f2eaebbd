// Regular joins of two kafka tables through the whole pipeline harness: both inputs repartitioned
// by the join key into one stage, each input's rows expiring on their own with
// table.exec.state.ttl, and the plan that `sluice explain` shows.
import { describe, expect, it } from 'vitest';
import { describePlan } from '../../../lib/plan/explain.js';
import { sqlPipeline } from '../../../lib/sql/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

const BROKERS = "'properties.bootstrap.servers' = '127.0.0.1:9092'";

const TABLES = `CREATE TABLE auctions (id BIGINT, seller BIGINT, item STRING)
  WITH ('connector' = 'kafka', 'topic' = 'auctions', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE people (id BIGINT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'people', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE sales (name STRING, item STRING) WITH ('connector' = 'kafka', 'topic' = 'sales', ${BROKERS}, 'format' = 'json');
`;

const json = (value: object) => ({ value: JSON.stringify(value) });

function harnessOf(script: string): PipelineTestHarness {
  return new PipelineTestHarness(sqlPipeline(script, { name: 'joins' }), { sourcePartitions: { auctions: [0], people: [0] } });
}

function sales(harness: PipelineTestHarness): string[] {
  return harness
    .output('sales')
    .map((record) => String(record.value))
    .sort();
}

describe('SQL regular joins', () => {
  it('join two tables by key whichever side arrives first, into a kafka table', () => {
    const harness = harnessOf(`${TABLES}INSERT INTO sales SELECT P.name, A.item FROM auctions AS A INNER JOIN people AS P ON A.seller = P.id;`);
    harness.send('auctions', [json({ id: 1, seller: 10, item: 'lamp' }), json({ id: 2, seller: 11, item: 'desk' })]);
    harness.send('people', [json({ id: 10, name: 'ada' }), json({ id: 12, name: 'bob' })]);
    harness.send('auctions', [json({ id: 3, seller: 10, item: 'rug' }), json({ id: 4, seller: null, item: 'mat' })]);
    harness.finish();
    expect(sales(harness)).toEqual(['{"name":"ada","item":"lamp"}', '{"name":"ada","item":"rug"}']);
  });

  it("forget each input's rows table.exec.state.ttl after they were written, each on its own", () => {
    const harness = harnessOf(`SET 'table.exec.state.ttl' = '10 s';
${TABLES}INSERT INTO sales SELECT P.name, A.item FROM auctions AS A JOIN people AS P ON A.seller = P.id;`);
    harness.send('people', [json({ id: 10, name: 'ada' })]);
    harness.advanceProcessingTime(6_000);
    harness.send('people', [json({ id: 10, name: 'ann' })]);
    harness.advanceProcessingTime(6_000);
    // ada was written 12 s ago and has expired; ann, 6 s ago, has not.
    harness.send('auctions', [json({ id: 1, seller: 10, item: 'lamp' })]);
    harness.advanceProcessingTime(11_000);
    harness.send('people', [json({ id: 10, name: 'amy' })]);
    harness.finish();
    expect(sales(harness)).toEqual(['{"name":"ann","item":"lamp"}']);
  });

  it('show the join, its keys, its state with its TTL and its changelog in the plan', () => {
    const harness = harnessOf(`SET 'table.exec.state.ttl' = '1 h';
${TABLES}INSERT INTO sales SELECT P.name, A.item FROM auctions AS A JOIN people AS P ON A.seller = P.id AND P.name <> A.item;`);
    const join = describePlan(harness.plan)
      .stages.flatMap((stage) => stage.operators)
      .find((operator) => operator.description.startsWith('Join('));
    expect(join?.description).toBe(
      "Join(joinType=[InnerJoin], where=[A.seller = P.id AND 1 more condition], select=[id, seller, item, id, name], state=[each input's rows by join key]) [insert-only]",
    );
    expect(join?.keyed).toBe(true);
    expect(join?.state).toEqual([
      { name: 'join-1/left-rows', kind: 'map', ttlMs: 3_600_000 },
      { name: 'join-1/right-rows', kind: 'map', ttlMs: 3_600_000 },
    ]);
  });
});

const TIMED = `CREATE TABLE offers (item STRING, price BIGINT, at_ms BIGINT, at AS TO_TIMESTAMP_LTZ(at_ms, 3), WATERMARK FOR at AS at)
  WITH ('connector' = 'kafka', 'topic' = 'offers', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE takes (item STRING, buyer STRING, at_ms BIGINT, at AS TO_TIMESTAMP_LTZ(at_ms, 3), WATERMARK FOR at AS at)
  WITH ('connector' = 'kafka', 'topic' = 'takes', ${BROKERS}, 'properties.group.id' = 'g', 'format' = 'json');
CREATE TABLE deals (item STRING, price BIGINT, buyer STRING) WITH ('connector' = 'kafka', 'topic' = 'deals', ${BROKERS}, 'format' = 'json');
INSERT INTO deals SELECT O.item, O.price, T.buyer FROM offers AS O JOIN takes AS T
  ON O.item = T.item AND T.at BETWEEN O.at AND O.at + INTERVAL '10' SECOND;`;

describe('SQL interval joins', () => {
  it('join the rows of a key within the interval, and drop each once the watermark has passed it', () => {
    const harness = new PipelineTestHarness(sqlPipeline(TIMED, { name: 'joins' }), { sourcePartitions: { offers: [0], takes: [0] } });
    const join = describePlan(harness.plan)
      .stages.flatMap((stage) => stage.operators)
      .find((operator) => operator.description.startsWith('IntervalJoin('));
    expect(join?.description).toContain('interval=[right − left in [0, 10000] ms]');
    expect(join?.description).toMatch(/\[insert-only\]$/);
    const [leftRows, rightRows] = (join?.state ?? []).map((state) => state.name.split('/'));
    harness.send('offers', [json({ item: 'lamp', price: 5, at_ms: 1_000 }), json({ item: 'desk', price: 9, at_ms: 2_000 })]);
    harness.send('takes', [json({ item: 'lamp', buyer: 'ada', at_ms: 11_000 }), json({ item: 'desk', buyer: 'bob', at_ms: 12_001 }), json({ item: 'lamp', buyer: 'cy', at_ms: 500 })]);
    expect(harness.outputValues('deals')).toEqual(['{"item":"lamp","price":5,"buyer":"ada"}']);
    // Both inputs' watermarks at 13 s: no row of either can find a partner any more.
    harness.send('offers', [json({ item: 'rug', price: 1, at_ms: 13_000 })]);
    harness.send('takes', [json({ item: 'mat', buyer: 'dan', at_ms: 13_000 })]);
    const kept = (names: string[] | undefined) => [...harness.stateOf(names?.[0] ?? '', names?.[1] ?? '').keys()];
    expect(kept(leftRows)).toEqual(['"rug"']);
    expect(kept(rightRows)).toEqual(['"mat"']);
    harness.finish();
    expect(harness.outputValues('deals')).toHaveLength(1);
  });
});
