import { describe, expect, it } from 'vitest';
import { sluice } from '../../helpers/cli.js';

describe('sluice explain', () => {
  it('prints the seed pipeline as two stages: its keyBy repartitions', async () => {
    const { code, stdout } = await sluice('explain', 'examples/order-aggregation.ts', '--no-brokers');
    expect(code).toBe(0);
    expect(stdout).toBe(`Pipeline order-aggregation: 2 stages
  checkpoints: every 60000 ms, timeout 600000 ms; key groups: 128; repartition partitions: 4; bad records: fail
  triggers: batches of the deployment’s batchSize, window the deployment’s batchingWindowSeconds, on-demand pollers

stage-1: one shard per partition of orders (source "Order Source")
  input: group order-aggregation, committed offsets (reset EARLIEST) (trigger from TRIM_HORIZON), watermarks: bounded out-of-orderness of 10000 ms
  1. Order Source [source] reads orders
  2. keyBy [repartition] writes order-aggregation-keyBy-repartition keyed by keyBy ← Order Source
  → repartition: topic order-aggregation-keyBy-repartition, partitions 4, deliveryGuarantee EXACTLY_ONCE

stage-2: one shard per partition of order-aggregation-keyBy-repartition (4 partitions, written by stage-1)
  input: trigger group order-aggregation-stage-2
  1. keyBy-input [repartition-input] reads the repartition topic
  2. keyBy [keyBy] in place: each element’s key is its record’s Kafka key ← keyBy-input
  3. category-totals [window, keyed] tumbling event-time windows of 300000 ms, sum('amount') ← keyBy
       state category-totals/windows (value)
  4. to-aggregate [map] map ← category-totals
  5. Order Aggregates Sink [sink] writes order-aggregates, EXACTLY_ONCE ← to-aggregate
  → sink: name Order Aggregates Sink, topic order-aggregates, deliveryGuarantee EXACTLY_ONCE, transactionalIds order-aggregation-tx-stage-2-<topic>-<partition>-<slot>, transactionTimeoutMs 900000, recordTimestamp ELEMENT
`);
  });

  it('prints the in-place variant as one stage, keyed by the record key', async () => {
    const { code, stdout } = await sluice('explain', 'examples/order-aggregation-in-place.ts', '--no-brokers');
    expect(code).toBe(0);
    expect(stdout).toBe(`Pipeline order-aggregation-in-place: 1 stage
  checkpoints: every 60000 ms, timeout 600000 ms; key groups: 128; repartition partitions: 4; bad records: fail
  triggers: batches of the deployment’s batchSize, window the deployment’s batchingWindowSeconds, on-demand pollers

stage-1: one shard per partition of orders (source "Order Source")
  input: group order-aggregation-in-place, committed offsets (reset EARLIEST) (trigger from TRIM_HORIZON), watermarks: bounded out-of-orderness of 10000 ms, partitioned by record key
  1. Order Source [source] reads orders
  2. keyBy [keyBy] in place: each element’s key is its record’s Kafka key ← Order Source
  3. category-totals [window, keyed] tumbling event-time windows of 300000 ms, sum('amount') ← keyBy
       state category-totals/windows (value)
  4. to-aggregate [map] map ← category-totals
  5. Order Aggregates Sink [sink] writes order-aggregates, EXACTLY_ONCE ← to-aggregate
  → sink: name Order Aggregates Sink, topic order-aggregates, deliveryGuarantee EXACTLY_ONCE, transactionalIds order-aggregation-in-place-tx-stage-1-<topic>-<partition>-<slot>, transactionTimeoutMs 900000, recordTimestamp ELEMENT
`);
  });

  it('cuts a keyBy on a new key into a repartition topic and a second stage', async () => {
    const { code, stdout } = await sluice('explain', 'test/fixtures/pipelines/top-category.ts', '--no-brokers');
    expect(code).toBe(0);
    expect(stdout).toBe(`Pipeline top-category: 2 stages
  checkpoints: every 30000 ms, timeout 120000 ms; key groups: 128; repartition partitions: 2; bad records: fail
  triggers: batches of the deployment’s batchSize, window the deployment’s batchingWindowSeconds, on-demand pollers

stage-1: one shard per partition of orders (source "orders")
  input: group top-category, committed offsets (reset EARLIEST) (trigger from TRIM_HORIZON), watermarks: bounded out-of-orderness of 5000 ms, partitioned by record key
  1. orders [source] reads orders
  2. keyBy [keyBy] in place: each element’s key is its record’s Kafka key ← orders
  3. minute-totals [window, keyed] tumbling event-time windows of 60000 ms, sum('amount') ← keyBy
       state minute-totals/windows (value)
  4. to-total [map] map ← minute-totals
  5. keyBy-2 [repartition] writes top-category-keyBy-2-repartition keyed by keyBy-2 ← to-total
  → repartition: topic top-category-keyBy-2-repartition, partitions 2, deliveryGuarantee AT_LEAST_ONCE

stage-2: one shard per partition of top-category-keyBy-2-repartition (2 partitions, written by stage-1)
  input: trigger group top-category-stage-2
  1. keyBy-2-input [repartition-input] reads the repartition topic
  2. keyBy-2 [keyBy] in place: each element’s key is its record’s Kafka key ← keyBy-2-input
  3. top-of-minute [window, keyed] tumbling event-time windows of 60000 ms, maxBy('amount') ← keyBy-2
       state top-of-minute/windows (value)
  4. top-sink [sink] writes top-categories, AT_LEAST_ONCE ← top-of-minute
  → sink: name top-sink, topic top-categories, deliveryGuarantee AT_LEAST_ONCE, recordTimestamp ELEMENT
`);
  });

  it('prints the plan as JSON with --json', async () => {
    const { code, stdout } = await sluice('explain', 'test/fixtures/pipelines/top-category.ts', '--json', '--no-brokers');
    expect(code).toBe(0);
    const plan = JSON.parse(stdout) as { stages: { id: string; input: Record<string, unknown>; outputs: unknown[] }[] };
    expect(plan.stages.map((s) => s.id)).toEqual(['stage-1', 'stage-2']);
    expect(plan.stages[1]?.input).toEqual({
      kind: 'repartition',
      topic: 'top-category-keyBy-2-repartition',
      partitions: 2,
      keyBy: 'keyBy-2',
      from: ['stage-1'],
      triggerGroup: 'top-category-stage-2',
    });
    expect(plan.stages[0]?.outputs).toEqual([
      { kind: 'repartition', topic: 'top-category-keyBy-2-repartition', partitions: 2, deliveryGuarantee: 'AT_LEAST_ONCE' },
    ]);
  });

  it('names the consumer groups, transactional ids and repartition topics of a deployment stage with --stage', async () => {
    const { code, stdout } = await sluice('explain', 'examples/order-aggregation.ts', '--stage', 'prod', '--no-brokers');
    expect(code).toBe(0);
    expect(stdout).toContain('Pipeline order-aggregation (deployment stage prod): 2 stages');
    expect(stdout).toContain(
      '  input: trigger group order-aggregation-prod, committed offsets of group order-aggregation (reset EARLIEST) (trigger from TRIM_HORIZON)',
    );
    expect(stdout).toContain('stage-2: one shard per partition of order-aggregation-prod-keyBy-repartition (4 partitions, written by stage-1)\n  input: trigger group order-aggregation-prod-stage-2');
    expect(stdout).toContain('transactionalIds order-aggregation-tx-prod-stage-2-<topic>-<partition>-<slot>');
    expect((await sluice('explain', 'examples/order-aggregation.ts', '--stage', 'a/b', '--no-brokers')).stderr).toContain(
      'The deployment stage "a/b" must be 1 to 32 letters, digits or dashes',
    );
  });

  it('fails with exit code 2 on a wrong command line and 1 on a file without a pipeline', async () => {
    expect((await sluice('explain')).code).toBe(2);
    expect((await sluice('frobnicate')).stderr).toMatch(/unknown command "frobnicate"/);
    const missing = await sluice('explain', 'no-such-file.ts');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no-such-file\.ts does not exist/);
    const notAPipeline = await sluice('explain', 'test/helpers/orders.ts');
    expect(notAPipeline.code).toBe(1);
    expect(notAPipeline.stderr).toMatch(/no default export of a StreamExecutionEnvironment: end the file with `export default env`/);
  });
});

describe('the sluice command', () => {
  it('runs from its bin entry and loads a TypeScript pipeline file', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/sluice.js', 'explain', 'examples/order-aggregation.ts', '--json', '--no-brokers']);
    expect((JSON.parse(stdout) as { pipeline: string }).pipeline).toBe('order-aggregation');
  });
});
