import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  ScanCommand,
  type DynamoDBDocumentClient,
  type ScanCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { INITIAL_LAYOUT, type PackId, type PackOptions, type StoredPack } from './packs.js';
import { ItemShardStore, parseStored, type EpochRange, type PackCondition, type RecordCondition, type ShardRecord, type ShardRef } from './shard-store.js';

/**
 * The shard store on DynamoDB (see docs/PROTOCOL.md). One table, keys `pk` and `sk`:
 *
 * - shard record — pk `shard#<stage>#<shard>`, sk `record`: `epoch`, `committedEpoch`,
 *   `aborted` (JSON ranges), `progress` (JSON, deflated), `buckets`, `liveBytes` and `density` (the pack layout);
 * - bucket pack — pk `pack#<stage>#<shard>#b<bucket>`, sk `pack`: `entries` (JSON, deflated), `ver`,
 *   `epoch`. One partition key per bucket spreads a shard's keys over many partitions;
 * - spilled key — pk `pack#<stage>#<shard>#k<key group>`, sk `<key as JSON>` (and `<key as
 *   JSON>#<n>` for its later chunks): the same attributes, for the one entry of a key whose
 *   state is too large to share a pack.
 *
 * Every read is strongly consistent; every write is conditional (no transactions).
 */
export class DynamoShardStore extends ItemShardStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Key writes in flight at once: the SDK's default socket pool, so that a batch of up to 50 changed keys writes in one round trip. */
    private readonly concurrency = 50,
    packing: PackOptions = {},
  ) {
    super(packing);
  }

  private static recordKey({ stage, shard }: ShardRef) {
    return { pk: `shard#${stage}#${shard}`, sk: 'record' };
  }

  private static packKey({ stage, shard }: ShardRef, id: PackId) {
    return id.key
      ? { pk: `pack#${stage}#${shard}#k${id.key.keyGroup}`, sk: id.chunk === 0 ? id.key.serialized : `${id.key.serialized}#${id.chunk}` }
      : { pk: `pack#${stage}#${shard}#b${id.bucket}`, sk: 'pack' };
  }

  protected async getRecord(shard: ShardRef): Promise<ShardRecord | undefined> {
    this.requests.recordReads++;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: DynamoShardStore.recordKey(shard), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      epoch: Item.epoch as number,
      committedEpoch: Item.committedEpoch as number,
      abortedEpochs: JSON.parse(Item.aborted as string) as EpochRange[],
      progress: Item.progress === undefined ? undefined : parseStored(Item.progress as Uint8Array | string),
      // Every record since key packs holds its layout; one without was written before them.
      ...(Item.buckets === undefined
        ? { layout: INITIAL_LAYOUT, writtenBeforeKeyPacks: true }
        : { layout: { buckets: Item.buckets as number, liveBytes: Item.liveBytes as number, density: (Item.density as number | undefined) ?? INITIAL_LAYOUT.density } }),
    };
  }

  protected async putRecordIf(shard: ShardRef, record: ShardRecord, recordCondition: RecordCondition, storedProgress: Buffer | undefined): Promise<boolean> {
    this.requests.recordWrites++;
    const condition = conditionExpression(recordCondition);
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...DynamoShardStore.recordKey(shard),
          epoch: record.epoch,
          committedEpoch: record.committedEpoch,
          aborted: JSON.stringify(record.abortedEpochs),
          buckets: record.layout.buckets,
          liveBytes: record.layout.liveBytes,
          density: record.layout.density,
          // Binary: a version before compression fails on it, instead of reading no progress.
          ...(storedProgress === undefined ? {} : { progress: storedProgress }),
        },
        ...condition,
      }),
    );
  }

  protected async getPacks(shard: ShardRef, ids: readonly PackId[]): Promise<Map<string, StoredPack>> {
    const result = new Map<string, StoredPack>();
    const byKey = new Map(ids.map((id) => [JSON.stringify(DynamoShardStore.packKey(shard, id)), id.text]));
    this.requests.itemsRead += ids.length;
    for (let start = 0; start < ids.length; start += 100) {
      let pending: Record<string, unknown>[] = ids.slice(start, start + 100).map((id) => DynamoShardStore.packKey(shard, id));
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** attempt, 2_000)));
        this.requests.itemReadRequests++;
        const response = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of response.Responses?.[this.tableName] ?? []) {
          const text = byKey.get(JSON.stringify({ pk: item.pk as string, sk: item.sk as string }));
          if (text !== undefined) result.set(text, { version: item.ver as number, epoch: item.epoch as number, entries: item.entries as Uint8Array | string });
        }
        pending = response.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (attempt > 20 && pending.length > 0) throw new Error(`DynamoDB left ${pending.length} keys unprocessed after 20 retries`);
      }
    }
    return result;
  }

  protected putPackIf(shard: ShardRef, id: PackId, pack: StoredPack, condition: PackCondition): Promise<boolean> {
    this.requests.itemWrites++;
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...DynamoShardStore.packKey(shard, id), entries: pack.entries, ver: pack.version, epoch: pack.epoch },
        ...packConditionExpression(condition),
      }),
    );
  }

  protected writeConcurrency(): number {
    return this.concurrency;
  }

  async deleteKeyedState(): Promise<number> {
    let deleted = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page: ScanCommandOutput = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          ProjectionExpression: 'pk, sk',
          // `key#` items are the state of versions before key packs, which a restore replaces too.
          FilterExpression: 'begins_with(pk, :pack) OR begins_with(pk, :key)',
          ExpressionAttributeValues: { ':pack': 'pack#', ':key': 'key#' },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      const keys = (page.Items ?? []).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
      for (let from = 0; from < keys.length; from += 25) {
        let requests = keys.slice(from, from + 25).map((Key) => ({ DeleteRequest: { Key } }));
        for (let attempt = 0; requests.length > 0; attempt++) {
          if (attempt > 20) throw new Error(`DynamoDB left ${requests.length} deletes unprocessed after 20 retries`);
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** attempt, 2_000)));
          const response = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
          requests = (response.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
        }
      }
      deleted += keys.length;
      start = page.LastEvaluatedKey;
    } while (start);
    return deleted;
  }

  private async conditional(command: PutCommand): Promise<boolean> {
    try {
      await this.client.send(command);
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}

/**
 * Creates the state table (on-demand) unless it exists, and waits until it is ACTIVE (a new
 * table answers ResourceNotFoundException until then): for offline mode and tests.
 */
export async function ensureStateTable(client: DynamoDBDocumentClient, tableName: string, timeoutMs = 30_000): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`DynamoDB table ${tableName} is still ${Table?.TableStatus ?? 'missing'} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function packConditionExpression(condition: PackCondition) {
  if (condition.kind === 'older') {
    return { ConditionExpression: 'attribute_not_exists(pk) OR epoch < :epoch', ExpressionAttributeValues: { ':epoch': condition.epoch } };
  }
  if (condition.version === undefined) return { ConditionExpression: 'attribute_not_exists(pk)' };
  return {
    ConditionExpression: 'ver = :version AND epoch <= :epoch',
    ExpressionAttributeValues: { ':version': condition.version, ':epoch': condition.epoch },
  };
}

function conditionExpression(condition: RecordCondition) {
  switch (condition.kind) {
    case 'absent':
      return { ConditionExpression: 'attribute_not_exists(pk)' };
    case 'unchanged':
      return {
        ConditionExpression: 'epoch = :epoch AND committedEpoch = :committedEpoch',
        ExpressionAttributeValues: { ':epoch': condition.epoch, ':committedEpoch': condition.committedEpoch },
      };
    case 'uncommitted':
      return { ConditionExpression: 'epoch = :epoch AND committedEpoch < :epoch', ExpressionAttributeValues: { ':epoch': condition.epoch } };
  }
}
