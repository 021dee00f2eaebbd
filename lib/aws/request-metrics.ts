import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

import type { RequestCounts, RequestTally } from '../runtime/request-counts.js';

export type { RequestCounts } from '../runtime/request-counts.js';

/**
 * Counts the requests AWS clients send, by operation — what DynamoDB on-demand and S3 bill
 * by — so that each batch and each checkpoint can report what it cost. Each command counts
 * once, however often the SDK retried it.
 */
export class RequestCounter implements RequestTally {
  private readonly counts = new Map<string, number>();

  attach(client: DynamoDBDocumentClient | S3Client, service: 'DynamoDB' | 'S3'): void {
    (client.middlewareStack as DynamoDBDocumentClient['middlewareStack']).add(
      (next, context) => (args) => {
        const operation = `${service}.${(context.commandName ?? 'Unknown').replace(/Command$/, '')}`;
        this.counts.set(operation, (this.counts.get(operation) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'sluiceRequestCounter' },
    );
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
