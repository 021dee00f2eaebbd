import { afterEach, describe, expect, it, vi } from 'vitest';
import { Observability } from '../../../lib/aws/observability.js';
import type { BatchReport } from '../../../lib/runtime/processor.js';

/** What the functions print, on stdout and stderr: each line parsed as JSON (EMF metrics and structured logs). */
function capturePrinted(): () => Record<string, unknown>[] {
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter((line) => line.trim() !== ''));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  return () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

afterEach(() => {
  vi.restoreAllMocks();
});

const report: BatchReport = {
  shard: { stage: 'stage-1/orders', shard: 3 },
  recordsIn: 1_000,
  recordsOut: 12,
  skipped: 0,
  filled: 0,
  keysRead: 8,
  keysWritten: 8,
  transaction: { transactionalId: 'order-agg-tx-stage-1-orders-3-5', producerId: '7', producerEpoch: 0 },
  acknowledged: 4,
  dropped: { late: 2, skipped: 0, deadLettered: 1 },
  requests: { 'DynamoDB.GetItem': 3, 'DynamoDB.PutItem': 10, 'DynamoDB.BatchGetItem': 1, 'S3.PutObject': 1 },
};

describe('Observability (Powertools for AWS Lambda)', () => {
  it('emits batch metrics in CloudWatch EMF and a structured log naming the shard', () => {
    const printed = capturePrinted();
    new Observability('order-aggregation', {}).batches('stage-1', [report], 180);
    const [emf, log] = printed();
    const aws = emf?._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
    const [directive] = aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('Sluice');
    expect(directive?.Dimensions[0]).toEqual(expect.arrayContaining(['service', 'stage']));
    expect(directive?.Metrics.map((m) => m.Name)).toEqual(
      expect.arrayContaining(['RecordsIn', 'RecordsOut', 'BatchLatency', 'DynamoDBRequests', 'S3Requests', 'TransactionsPrecommitted']),
    );
    expect(emf).toMatchObject({ service: 'sluice-order-aggregation', stage: 'stage-1', RecordsIn: 1_000, RecordsOut: 12, BatchLatency: 180, DynamoDBRequests: 14, S3Requests: 1 });
    expect(emf).toMatchObject({ LateRecordsDropped: 2, BadRecordsSkipped: 0, BadRecordsDeadLettered: 1 });
    expect(log).toMatchObject({ level: 'INFO', message: 'Processed batch', service: 'sluice-order-aggregation' });
    expect(JSON.stringify(log)).toContain('stage-1/orders/3');
  });

  it('reports committed and lost transactions, each loss with its shard and checkpoint', () => {
    const printed = capturePrinted();
    new Observability('order-aggregation', {}).commit({
      checkpoint: 9,
      transactions: 3,
      rollbacks: [{ stageId: 'stage-1', topic: 'orders', partition: 1, checkpoint: 9, epoch: 41, base: 8, reason: 'fenced' }],
    });
    const [emf, error] = printed();
    expect(emf).toMatchObject({ TransactionsCommitted: 3, TransactionsLost: 1 });
    expect(error).toMatchObject({ level: 'ERROR', shard: 'stage-1 orders/1', checkpoint: 9, epoch: 41 });
  });
});
