import { describe, expect, it } from 'vitest';
import { formatHandlerAgainstFlink, type HandlerRow } from '../../../bench/handler.js';

const row = (batch: number, median: number): HandlerRow => ({
  guarantee: 'EXACTLY_ONCE',
  batch,
  sluice: { median, min: median, max: median },
  floor: { median: 1, min: 1, max: 1 },
  emulatorsSluice: 0,
  emulatorsFloor: 0,
  requestsPerBatch: {},
  records: 100_000,
  checkpointsSluice: 2,
  settled: { sluice: 1, floor: 1 },
  modelled: {
    sluice: { roundTrips: { DynamoDB: 0, S3: 0, Kafka: 0 }, billedMs: {} },
    floor: { roundTrips: { DynamoDB: 0, S3: 0, Kafka: 0 }, billedMs: {} },
  },
});

describe("the handler's figures beside Flink's", () => {
  it('turn µs per record into records/s per core, with a line per batch a script can read', () => {
    const report = formatHandlerAgainstFlink([row(1_000, 16), row(10_000, 6.4)], 50_000);
    expect(report).toContain('| EXACTLY_ONCE | 10,000 | 156,250 | 3.13 |');
    expect(report).toContain('handler records/s per core, EXACTLY_ONCE, batch 1,000: 62,500 (Flink EXACTLY_ONCE 50,000)');
    expect(report).toContain('handler records/s per core, EXACTLY_ONCE, batch 10,000: 156,250 (Flink EXACTLY_ONCE 50,000)');
  });
});
