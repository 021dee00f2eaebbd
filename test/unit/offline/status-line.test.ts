import { describe, expect, it } from 'vitest';
import { formatStatusLine, Throughput } from '../../../lib/offline/offline.js';
import type { BatchReport } from '../../../lib/runtime/processor.js';
import type { PipelineStatus } from '../../../lib/runtime/status.js';

const batch = (recordsIn: number, recordsOut: number) => ({ recordsIn, recordsOut }) as BatchReport;

const status: PipelineStatus = {
  pipeline: 'orders',
  checkpoints: { triggered: 3, triggeredAt: 0, completed: 2, completedAt: Date.UTC(2026, 11, 1, 12, 0, 5), committed: 2 },
  shards: [],
  deletedOutput: [],
  resting: false,
};

describe('the status line of sluice offline', () => {
  it('shows totals, and rates over the last 10 s, so that batches every few seconds do not read as 0/s', () => {
    const clock = { now: 0 };
    const throughput = new Throughput(() => clock.now);
    clock.now = 2_000;
    throughput.add([batch(150, 4), batch(64, 0)]);
    // Between batches, a one-second rate would say 0/s.
    clock.now = 4_000;
    expect(formatStatusLine(status, throughput.now())).toMatch(/^in 214 \(54\/s\) · out 4 \(1\/s\) · lag {2}· checkpoint 2 at 12:00:05/);
    clock.now = 13_000;
    throughput.add([batch(100, 0)]);
    // Past the window, the first batches leave the rate and stay in the totals.
    expect(throughput.now()).toEqual({ in: 10, out: 0, totalIn: 314, totalOut: 4 });
  });

  it('says when committed output has been deleted from the log', () => {
    const deleted = { checkpoint: 2, checkpointAt: 0, topic: 'totals', partition: 1, offset: 5, logStart: 9 };
    const line = formatStatusLine({ ...status, deletedOutput: [deleted, { ...deleted, offset: 7 }] }, new Throughput().now());
    expect(line).toMatch(/ · COMMITTED OUTPUT DELETED from totals\/1 \(sluice status --offline says more\)$/);
  });

  it('says when the pipeline rests', () => {
    expect(formatStatusLine({ ...status, resting: true }, new Throughput().now())).toMatch(/ · pending transactions 0 · at rest$/);
  });

  it('names the shards stopped at a failing record, not those still retrying it', () => {
    const shard = { stageId: 'stage-1', topic: 'orders', partition: 0, offset: 40, logEnd: 90, lag: 50, acknowledged: 3, dropped: { late: 0, skipped: 0, deadLettered: 0 }, epoch: 9, transactions: [] };
    const failure = { offset: 41, attempts: 10, reason: 'Record orders/0@41: ...', firstFailedAt: 0, lastFailedAt: 0 };
    const line = formatStatusLine(
      { ...status, shards: [{ ...shard, failure: { ...failure, stopped: true } }, { ...shard, partition: 1, failure: { ...failure, stopped: false } }] },
      new Throughput().now(),
    );
    expect(line).toMatch(/ · STOPPED at failing orders\/0@41 \(sluice status --offline says why; sluice resume --offline after the fix\)$/);
  });
});
