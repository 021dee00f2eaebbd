/** Requests by `<service>.<operation>`, for example `DynamoDB.PutItem` or `S3.PutObject`. */
export type RequestCounts = Readonly<Record<string, number>>;

/**
 * Counts the requests a runtime's stores send, so that each batch and each checkpoint can
 * report what it cost; lib/aws counts them on the AWS SDK clients.
 */
export interface RequestTally {
  snapshot(): RequestCounts;
  /** What was sent since `before` (a snapshot). */
  since(before: RequestCounts): RequestCounts;
}
