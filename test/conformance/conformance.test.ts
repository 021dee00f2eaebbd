// Sluice against Apache Flink 2.2, record for record, on every scenario of test/conformance:
// Flink's output is kept in each scenario's expected-by-flink.txt (npm run conformance runs
// Flink and rewrites it), with the hash of the job, input and runner it came from, so a scenario
// whose Java or input changed since fails here until Flink has run on it again.
import { describe, expect, it } from 'vitest';
import { comparable, expectedOutput, inputsHash, runOnSluice, scenarios } from './scenarios.js';

describe('Sluice conforms to Apache Flink 2.2', () => {
  it.each(scenarios().map((s) => [s.name, s] as const))('%s', async (_, scenario) => {
    const expected = expectedOutput(scenario);
    expect(expected.hash, `Flink's output is stale or missing: run npm run conformance -- --only ${scenario.name}`).toBe(inputsHash(scenario));
    expect(expected.lines.length, 'Flink wrote something').toBeGreaterThan(0);
    expect(comparable(scenario, await runOnSluice(scenario))).toEqual(comparable(scenario, expected.lines));
  });
});
