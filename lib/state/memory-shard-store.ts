import type { PackId, StoredPack } from './packs.js';
import {
  committedStateOf,
  ItemShardStore,
  meetsCondition,
  meetsPackCondition,
  type KeyState,
  type PackCondition,
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
  private readonly packs = new Map<string, Map<string, StoredPack>>();

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

  protected getPacks(shard: ShardRef, ids: readonly PackId[]): Promise<Map<string, StoredPack>> {
    this.requests.itemReadRequests += Math.ceil(ids.length / 100);
    this.requests.itemsRead += ids.length;
    const stored = this.packs.get(shardId(shard));
    const result = new Map<string, StoredPack>();
    for (const { text } of ids) {
      const pack = stored?.get(text);
      if (pack) result.set(text, pack);
    }
    return Promise.resolve(result);
  }

  protected putPackIf(shard: ShardRef, id: PackId, pack: StoredPack, condition: PackCondition): Promise<boolean> {
    this.requests.itemWrites++;
    let stored = this.packs.get(shardId(shard));
    if (!stored) this.packs.set(shardId(shard), (stored = new Map<string, StoredPack>()));
    const matches = meetsPackCondition(stored.get(id.text), condition);
    if (matches) stored.set(id.text, { ...pack });
    return Promise.resolve(matches);
  }

  protected writeConcurrency(): number {
    return 1;
  }

  /** Every key's committed state in the shard, as a reader would see it now: for checking a test's outcome. */
  committedState(shard: ShardRef): Map<string, KeyState> {
    return committedStateOf(this.records.get(shardId(shard)), this.packs.get(shardId(shard)) ?? new Map<string, StoredPack>());
  }

  deleteKeyedState(): Promise<number> {
    const count = [...this.packs.values()].reduce((sum, packs) => sum + packs.size, 0);
    this.packs.clear();
    return Promise.resolve(count);
  }
}
