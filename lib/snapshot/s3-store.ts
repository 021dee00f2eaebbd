import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsCommand,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { checkSnapshotKey, newRequestCounts, randomUniqueId, type SnapshotStore } from './snapshot-store.js';

/** Snapshots in an S3 bucket, under a prefix (for example the pipeline's name). */
export class S3SnapshotStore implements SnapshotStore {
  readonly requests = newRequestCounts();
  readonly uniqueId = randomUniqueId;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix = '',
  ) {}

  private objectKey(key: string): string {
    return `${this.prefix}${checkSnapshotKey(key)}`;
  }

  async put(key: string, body: Buffer | string): Promise<void> {
    this.requests.puts++;
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: body }));
  }

  async get(key: string): Promise<Buffer | undefined> {
    this.requests.gets++;
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return Body ? Buffer.from(await Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    // ListObjects (v1) pages by marker. ListObjectsV2 would do as well on S3, but s3rver
    // makes its continuation tokens with a cipher that current OpenSSL no longer offers, and
    // fails every truncated V2 listing.
    let marker: string | undefined;
    for (;;) {
      this.requests.lists++;
      const page = await this.client.send(
        new ListObjectsCommand({ Bucket: this.bucket, Prefix: `${this.prefix}${prefix}`, Marker: marker }),
      );
      const objectKeys = (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
      for (const key of objectKeys) keys.push(key.slice(this.prefix.length));
      marker = objectKeys.at(-1);
      if (!page.IsTruncated || marker === undefined) return keys.sort();
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += 1000) {
      this.requests.deletes++;
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(start, start + 1000).map((key) => ({ Key: this.objectKey(key) })), Quiet: true },
        }),
      );
    }
  }
}

/** Creates the bucket unless it exists: for offline mode and tests. */
export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}
