import { describe, expect, it } from 'vitest';
import { costModel, idleCostPerMonth, PRICES, SEED_DEPLOYMENT_IDLE } from '../../../bench/cost-model.js';

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
  it('bills Sluice’s Lambda by the modelled duration of a batch at the deployed memory size', () => {
    const [atThousand] = costModel({ billedMsPerBatch: 60, memoryMb: 1_024, batchSize: 1_000, flinkRecordsPerCpuSecond: 50_000, requests: {}, records: 1_000 });
    // 60 ms of 1 GB for 1,000 records: 0.06 GB-s per thousand, and one request per thousand.
    expect(atThousand?.sluice.lambda).toBeCloseTo(1e6 * ((0.06 / 1_000) * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest / 1_000), 10);
    expect(atThousand?.flink.kpus).toBe(2);
  });
});
