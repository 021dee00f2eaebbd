import type { KeyRef } from './keys.js';
import {
  ItemShardStore,
  meetsCondition,
  visibleState,
  type KeyItem,
  type KeyState,
  type RecordCondition,
  type ShardRecord,
  type ShardRef,
} from './shard-store.js';

function shardId({ stage, shard }: ShardRef): string {
  return `${stage}\u0000${shard}`;
}

/** The shard store in memory, with the same conditions as DynamoDB's: for tests and the harness. */
export class MemoryShardStore extends ItemShardStore {
  private readonly records = new Map<string, ShardRecord>();
  private readonly items = new Map<string, Map<string, KeyItem>>();

  protected getRecord(shard: ShardRef): Promise<ShardRecord | undefined> {
    this.requests.recordReads++;
    return Promise.resolve(structuredClone(this.records.get(shardId(shard))));
  }

  protected putRecordIf(shard: ShardRef, record: ShardRecord, condition: RecordCondition): Promise<boolean> {
    this.requests.recordWrites++;
    const matches = meetsCondition(this.records.get(shardId(shard)), condition);
    if (matches) this.records.set(shardId(shard), structuredClone(record));
    return Promise.resolve(matches);
  }

  protected getItems(shard: ShardRef, keys: readonly KeyRef[]): Promise<Map<string, KeyItem>> {
    this.requests.itemReadRequests += Math.ceil(keys.length / 100);
    this.requests.itemsRead += keys.length;
    const stored = this.items.get(shardId(shard));
    const result = new Map<string, KeyItem>();
    for (const key of keys) {
      const item = stored?.get(key.serialized);
      if (item) result.set(key.serialized, structuredClone(item));
    }
    return Promise.resolve(result);
  }

  protected putItemIf(shard: ShardRef, key: KeyRef, item: KeyItem, expectedCurEpoch: number | undefined): Promise<boolean> {
    this.requests.itemWrites++;
    let stored = this.items.get(shardId(shard));
    if (!stored) this.items.set(shardId(shard), (stored = new Map<string, KeyItem>()));
    const matches = stored.get(key.serialized)?.curEpoch === expectedCurEpoch;
    if (matches) stored.set(key.serialized, structuredClone(item));
    return Promise.resolve(matches);
  }

  protected writeConcurrency(): number {
    return 1;
  }

  /** Every key's committed state in the shard, as a reader would see it now: for checking a test's outcome. */
  committedState(shard: ShardRef): Map<string, KeyState> {
    const record = this.records.get(shardId(shard));
    const claim = { shard, epoch: record?.epoch ?? 0, committedEpoch: record?.committedEpoch ?? 0, abortedEpochs: record?.abortedEpochs ?? [], progress: undefined };
    const state = new Map<string, KeyState>();
    for (const [key, item] of this.items.get(shardId(shard)) ?? []) {
      const visible = visibleState(claim, item);
      if (visible) state.set(key, visible);
    }
    return state;
  }

  deleteKeyedState(): Promise<number> {
    const count = [...this.items.values()].reduce((sum, items) => sum + items.size, 0);
    this.items.clear();
    return Promise.resolve(count);
  }
}
