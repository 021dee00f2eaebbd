import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

import type { RequestCounts, RequestTally } from '../runtime/request-counts.js';

export type { RequestCounts } from '../runtime/request-counts.js';

/**
 * One request, from the command's send to its settling (retries included), on
 * `performance.now()`'s clock: what a model of a batch's critical path needs.
 */
export interface RequestSpan {
  /** `<service>.<operation>`, as the counts name it. */
  readonly operation: string;
  readonly start: number;
  readonly end: number;
}

/**
 * Counts the requests AWS clients send, by operation — what DynamoDB on-demand and S3 bill
 * by — so that each batch and each checkpoint can report what it cost. Each command counts
 * once, however often the SDK retried it.
 */
export class RequestCounter implements RequestTally {
  private readonly counts = new Map<string, number>();
  private readonly observers = new Set<(span: RequestSpan) => void>();

  attach(client: DynamoDBDocumentClient | S3Client, service: 'DynamoDB' | 'S3'): void {
    (client.middlewareStack as DynamoDBDocumentClient['middlewareStack']).add(
      (next, context) => (args) => {
        const operation = `${service}.${(context.commandName ?? 'Unknown').replace(/Command$/, '')}`;
        this.counts.set(operation, (this.counts.get(operation) ?? 0) + 1);
        if (this.observers.size === 0) return next(args);
        const start = performance.now();
        const settled = () => {
          const span = { operation, start, end: performance.now() };
          for (const observer of this.observers) observer(span);
        };
        return next(args).finally(settled);
      },
      { step: 'initialize', name: 'sluiceRequestCounter' },
    );
  }

  /** Calls `observer` with each request's span as it settles, until the returned function is called. */
  observe(observer: (span: RequestSpan) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  snapshot(): RequestCounts {
    return Object.fromEntries(this.counts);
  }

  /** What was sent since `before` (a snapshot), operations with no requests left out. */
  since(before: RequestCounts): RequestCounts {
    const diff: Record<string, number> = {};
    for (const [operation, count] of this.counts) {
      const sent = count - (before[operation] ?? 0);
      if (sent > 0) diff[operation] = sent;
    }
    return diff;
  }
}
