import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CommitReport } from '../runtime/commit-function.js';
import type { BatchReport } from '../runtime/processor.js';
import type { RequestCounts } from './request-metrics.js';

function total(requests: RequestCounts, service: 'DynamoDB' | 'S3'): number {
  return Object.entries(requests).reduce((sum, [operation, count]) => (operation.startsWith(`${service}.`) ? sum + count : sum), 0);
}

/**
 * What the deployed functions report (Powertools for AWS Lambda): structured JSON logs, and
 * metrics in CloudWatch Embedded Metric Format under the namespace `POWERTOOLS_METRICS_NAMESPACE`
 * (default Sluice), with `POWERTOOLS_SERVICE_NAME` (the deployment: `sluice-<pipeline>-<stage>`)
 * as the `service` dimension and the pipeline's stage as `stage`. Logs name shards,
 * offsets and checkpoints; never records' contents or credentials.
 */
export class Observability {
  readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(pipeline: string, env: NodeJS.ProcessEnv = process.env) {
    const serviceName = env.POWERTOOLS_SERVICE_NAME ?? `sluice-${pipeline}`;
    this.logger = new Logger({ serviceName });
    this.metrics = new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE ?? 'Sluice', serviceName });
  }

  /** One processor invocation: records in and out, latency, state and snapshot requests. */
  batches(stage: string, reports: readonly BatchReport[], durationMs: number): void {
    const sum = (pick: (report: BatchReport) => number) => reports.reduce((n, report) => n + pick(report), 0);
    this.metrics.addDimension('stage', stage);
    this.metrics.addMetric('RecordsIn', MetricUnit.Count, sum((r) => r.recordsIn));
    this.metrics.addMetric('RecordsOut', MetricUnit.Count, sum((r) => r.recordsOut));
    this.metrics.addMetric('BatchLatency', MetricUnit.Milliseconds, durationMs);
    this.metrics.addMetric('KeysWritten', MetricUnit.Count, sum((r) => r.keysWritten));
    this.metrics.addMetric('DynamoDBRequests', MetricUnit.Count, sum((r) => total(r.requests, 'DynamoDB')));
    this.metrics.addMetric('S3Requests', MetricUnit.Count, sum((r) => total(r.requests, 'S3')));
    this.metrics.addMetric('TransactionsPrecommitted', MetricUnit.Count, sum((r) => (r.transaction ? 1 : 0)));
    this.metrics.addMetric('ShardsRolledBack', MetricUnit.Count, sum((r) => (r.rollback ? 1 : 0)));
    this.metrics.addMetric('LateRecordsDropped', MetricUnit.Count, sum((r) => r.dropped.late));
    this.metrics.addMetric('BadRecordsSkipped', MetricUnit.Count, sum((r) => r.dropped.skipped));
    this.metrics.addMetric('BadRecordsDeadLettered', MetricUnit.Count, sum((r) => r.dropped.deadLettered));
    this.metrics.addMetric('ShardsStopped', MetricUnit.Count, sum((r) => (r.stopped ? 1 : 0)));
    this.metrics.publishStoredMetrics();
    for (const { shard, stopped } of reports) {
      if (!stopped) continue;
      this.logger.error('The shard has stopped at a failing record: it processes nothing until sluice resume', {
        shard: `${shard.stage}/${shard.shard}`,
        offset: stopped.offset,
        attempts: stopped.attempts,
        since: new Date(stopped.firstFailedAt).toISOString(),
        reason: stopped.reason,
      });
    }
    for (const { rollback } of reports) {
      if (!rollback) continue;
      this.logger.warn('Rolled the shard back to before its lost transaction; it replays from there', {
        shard: `${rollback.shard.stage}/${rollback.shard.shard}`,
        checkpoint: rollback.checkpoint,
        epoch: rollback.epoch,
        offset: rollback.offset,
        keysRestored: rollback.keysRestored,
        transactionsAborted: rollback.transactionsAborted,
      });
    }
    this.logger.info('Processed batch', {
      stage,
      durationMs,
      shards: reports.map(({ shard, recordsIn, recordsOut, skipped, filled, keysRead, keysWritten, acknowledged, dropped, requests }) => ({
        shard: `${shard.stage}/${shard.shard}`,
        recordsIn,
        recordsOut,
        skipped,
        filled,
        keysRead,
        keysWritten,
        acknowledged,
        dropped,
        requests,
      })),
    });
  }

  /** One coordinator run; a completed checkpoint's duration (trigger to completion). */
  coordinator(result: { outcome: string; checkpoint: number; requests: RequestCounts; checkpointDurationMs?: number }): void {
    if (result.checkpointDurationMs !== undefined) {
      this.metrics.addMetric('CheckpointDuration', MetricUnit.Milliseconds, result.checkpointDurationMs);
      this.metrics.addMetric('CheckpointsCompleted', MetricUnit.Count, 1);
    }
    this.metrics.addMetric('DynamoDBRequests', MetricUnit.Count, total(result.requests, 'DynamoDB'));
    this.metrics.addMetric('S3Requests', MetricUnit.Count, total(result.requests, 'S3'));
    this.metrics.publishStoredMetrics();
    this.logger.info(`Coordinator: ${result.outcome}`, { ...result });
  }

  /**
   * Once per awake coordinator invocation: how long ago the latest checkpoint completed. A
   * resting pipeline sends none, so its alarm, which treats missing data as fine, stays quiet.
   */
  checkpointAge(ms: number): void {
    this.metrics.addMetric('CheckpointAge', MetricUnit.Milliseconds, ms);
    this.metrics.publishStoredMetrics();
  }

  /** One commit function run: transactions committed, and lost ones with the rollback they requested. */
  commit(report: CommitReport): void {
    this.metrics.addMetric('TransactionsCommitted', MetricUnit.Count, report.transactions);
    this.metrics.addMetric('TransactionsLost', MetricUnit.Count, report.rollbacks.length);
    this.metrics.publishStoredMetrics();
    for (const rollback of report.rollbacks) {
      this.logger.error("A transaction was lost; the shard's next invocation rolls it back and replays", {
        shard: `${rollback.stageId} ${rollback.topic}/${rollback.partition}`,
        checkpoint: rollback.checkpoint,
        epoch: rollback.epoch,
        reason: rollback.reason,
      });
    }
    this.logger.info('Committed checkpoint', { checkpoint: report.checkpoint, transactions: report.transactions });
  }
}
