import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';

/**
 * Where the AWS clients connect. On Lambda everything comes from the environment; offline
 * and in tests, `endpoint` points at the embedded emulators (dynalite, s3rver).
 */
export interface AwsClientOptions {
  readonly region?: string;
  readonly endpoint?: string;
  /** Static credentials for emulators; on AWS the default provider chain is used. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Retries of throttled and 5xx requests (the SDK's standard mode). Default 8. */
  readonly maxAttempts?: number;
}

function common(options: AwsClientOptions) {
  return {
    region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
    maxAttempts: options.maxAttempts ?? 8,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  };
}

export function createDocumentClient(options: AwsClientOptions = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(common(options)), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

export function createS3Client(options: AwsClientOptions = {}): S3Client {
  // Emulators serve buckets by path, not by virtual host.
  return new S3Client({ ...common(options), forcePathStyle: options.endpoint !== undefined });
}

/** Loaded on first use: only a pipeline that goes to rest calls EventBridge, and a container's INIT is billed. */
export async function createEventBridgeClient(options: AwsClientOptions = {}): Promise<EventBridgeClient> {
  const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
  return new EventBridgeClient(common(options));
}
