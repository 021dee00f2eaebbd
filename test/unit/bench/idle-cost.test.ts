import { describe, expect, it } from 'vitest';
import { idleCostPerMonth, SEED_DEPLOYMENT_IDLE } from '../../../bench/cost-model.js';

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
