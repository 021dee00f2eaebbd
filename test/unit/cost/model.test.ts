import { describe, expect, it } from 'vitest';
import { batchCostAt, batchSizeAt, checkpointCost, costModel, idleCostPerMonth, MODELLED_RATES, PRICES, ratioLines, SEED_DEPLOYMENT_IDLE, WRITE_UNITS } from '../../../lib/cost/model.js';

describe('the idle cost of a deployed pipeline', () => {
  it('is its storage and monitoring alone at rest: no function runs', () => {
    // The seed pipeline's template: 10 alarms and a dashboard (test/integration/deploy/serverless-package.test.ts).
    const cost = idleCostPerMonth(SEED_DEPLOYMENT_IDLE);
    expect(cost.atRest.functions).toBe(0);
    expect(cost.atRest.total).toBeCloseTo(4.27, 2);
    // Awake with nothing to do, the coordinator's 55 s of each minute at 256 MB, and its reads.
    expect(cost.awake - cost.atRest.total).toBeCloseTo(8.36, 2);
    expect(cost.flink).toBeCloseTo(160.6, 1);
  });
});

describe('the cost of a million records', () => {
  const batches = [
    { batchSize: 100, billedMs: 12, requests: { 'DynamoDB.GetItem': 1, 'DynamoDB.PutItem': 3, 'S3.PutObject': 1 } },
    { batchSize: 1_000, billedMs: 40, requests: { 'DynamoDB.GetItem': 1, 'DynamoDB.PutItem': 3, 'S3.PutObject': 1 } },
    { batchSize: 10_000, billedMs: 400, requests: { 'DynamoDB.GetItem': 1, 'DynamoDB.PutItem': 4, 'S3.PutObject': 1 } },
  ];
  const inputs = {
    memoryMb: 1_024,
    batches,
    shards: 4,
    recordBytes: 200,
    batchingWindowS: 1,
    checkpointIntervalS: 60,
    initBilledMs: 400,
    coldStartsPerShardHour: 1,
    flinkRecordsPerCpuSecond: 50_000,
  };

  it('runs the batch a deployment would at each rate: a shard\'s records of one window, within Lambda\'s 10,000 and 6 MB', () => {
    expect(MODELLED_RATES.map((rate) => batchSizeAt(rate, inputs))).toEqual([250, 2_500, 10_000]);
    expect(batchSizeAt(100_000, { ...inputs, recordBytes: 2_048 })).toBe(3_072);
    expect(batchSizeAt(1, inputs)).toBe(1);
  });

  it('takes a batch\'s duration and requests from the measured sizes nearest it, linearly', () => {
    const between = batchCostAt(batches, 5_500);
    expect(between.billedMs).toBeCloseTo(220, 6);
    expect(between.requests['DynamoDB.PutItem']).toBeCloseTo(3.5, 6);
    // Below the smallest, along the two smallest, never below nothing.
    expect(batchCostAt(batches, 10).billedMs).toBeCloseTo(12 - (28 * 90) / 900, 6);
    expect(batchCostAt([{ batchSize: 100, billedMs: 100, requests: {} }, { batchSize: 200, billedMs: 300, requests: {} }], 10).billedMs).toBe(0);
  });

  it('bills each batch\'s duration and request, spreads the fixed requests of a batch over its records, and keeps the cluster out of the ratio', () => {
    const [low, , high] = costModel(inputs);
    if (!low || !high) throw new Error('three rates');
    const batch = batchCostAt(batches, 250);
    expect(low.sluice.lambda).toBeCloseTo((1e6 / 250) * ((batch.billedMs / 1_000) * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest), 10);
    expect(low.sluice.dynamodb).toBeCloseTo((1e6 / 250) * (3 * PRICES.dynamoWriteUnit + PRICES.dynamoReadUnit), 10);
    // A batch of 10,000 pays its fixed requests once for forty times the records.
    expect(high.sluice.dynamodb).toBeLessThan(low.sluice.dynamodb / 30);
    for (const row of [low, high]) {
      expect(row.cluster).toBeCloseTo((1e6 / (row.rate * 3600)) * PRICES.mskBrokerHour * PRICES.mskBrokers, 10);
      expect(row.sluice.total).toBeCloseTo(Object.entries(row.sluice).reduce((sum, [part, value]) => (part === 'total' ? sum : sum + value), 0), 12);
      expect(row.ratio).toBeCloseTo(row.sluice.total / row.flink.total, 12);
    }
    // INIT: 4 shards start once an hour, 400 ms at 1 GB each.
    expect(low.sluice.init).toBeCloseTo((1e6 / 3.6e6) * 4 * 0.4 * PRICES.lambdaArmGbSecond, 12);
    expect(high.flink.kpus).toBe(3);
    expect(high.pollers).toBe(4);
  });

  it('bills the measured write units when the figures have them, and an object a shard and checkpoint for inline deltas', () => {
    const inline = batches.map((batch) => ({ ...batch, requests: { 'DynamoDB.GetItem': 1, 'DynamoDB.PutItem': 3, [WRITE_UNITS]: 5 } }));
    const [withObjects] = costModel(inputs, [1_000]);
    const [withInline] = costModel({ ...inputs, batches: inline }, [1_000]);
    if (!withObjects || !withInline) throw new Error('one rate');
    expect(withInline.sluice.dynamodb).toBeCloseTo((1e6 / 250) * (5 * PRICES.dynamoWriteUnit + PRICES.dynamoReadUnit), 10);
    expect(withInline.sluice.s3).toBe(0);
    const checkpoints = 1e6 / 1_000 / 60;
    expect(withInline.sluice.checkpoints).toBeCloseTo(checkpoints * checkpointCost(4, 1_024, 1), 12);
    expect(withInline.sluice.checkpoints - withObjects.sluice.checkpoints).toBeCloseTo(checkpoints * 4 * ((1 + 1 / 7) * PRICES.s3Put + (8 / 7) * PRICES.s3Get), 12);
  });

  it('prints one ratio line a rate, for scripts', () => {
    const rows = costModel(inputs);
    expect(ratioLines(rows).split('\n')).toEqual(rows.map((row) => `Sluice ÷ Managed Flink, cluster excluded, ${row.rate.toLocaleString('en')} records/s: ${row.ratio.toFixed(2)}`));
    expect(ratioLines(rows)).toMatch(/^Sluice ÷ Managed Flink, cluster excluded, 100,000 records\/s: \d+\.\d\d$/m);
    expect(ratioLines(rows, 75)).toMatch(/^Sluice ÷ Managed Flink, cluster excluded, latency goal 75 s, 1,000 records\/s: \d+\.\d\d$/m);
  });
});
