// The DynamoDB and S3 twins of the simulation: the in-memory stores that pass the same contract
// tests as DynamoDB and S3, with every request going through the scheduler.
import { MemoryShardStore } from '../../lib/state/memory-shard-store.js';
import { MemoryCoordinatorStore, type CoordinatorRecord, type RollbackRequest } from '../../lib/state/coordinator-store.js';
import type { PackId, PackOptions, StoredPack } from '../../lib/state/packs.js';
import type { PackCondition, RecordCondition, ShardRecord, ShardRef } from '../../lib/state/shard-store.js';
import { isRollbackOf } from '../../lib/runtime/rollback-requests.js';
import { readManifest, readShardState } from '../../lib/snapshot/checkpoint-state.js';
import type { OnlineChecks } from './checks.js';
import { MemorySnapshotStore } from '../../lib/snapshot/memory-store.js';
import type { SnapshotStore } from '../../lib/snapshot/snapshot-store.js';
import type { TwinIo } from '../../lib/testing/kafka-twin.js';

export class SimulatedShardStore extends MemoryShardStore {
  /** Each shard's record as last written, uncloned, for the online checks (records are never changed once written). */
  private readonly latest = new Map<string, ShardRecord>();

  constructor(
    private readonly io: TwinIo,
    packing: PackOptions,
    private readonly checks: OnlineChecks,
  ) {
    super(packing);
  }

  protected override getRecord(shard: ShardRef): Promise<ShardRecord | undefined> {
    return this.io.call('GetItem', () => super.getRecord(shard));
  }

  protected override putRecordIf(shard: ShardRef, record: ShardRecord, condition: RecordCondition): Promise<boolean> {
    return this.io.call('PutItem', async () => {
      const key = `${shard.stage}/${shard.shard}`;
      const before = await Promise.resolve(this.latest.get(key));
      const written = await super.putRecordIf(shard, record, condition);
      if (written) {
        this.checks.shardWritten(shard, before, record);
        this.latest.set(key, record);
      }
      return written;
    });
  }

  protected override getPacks(shard: ShardRef, ids: readonly PackId[]): Promise<Map<string, StoredPack>> {
    return this.io.call('BatchGetItem', () => super.getPacks(shard, ids));
  }

  protected override putPackIf(shard: ShardRef, id: PackId, pack: StoredPack, condition: PackCondition): Promise<boolean> {
    return this.io.call('PutItem', () => super.putPackIf(shard, id, pack, condition));
  }

  /** Every shard's record as last written, outside the scheduler and uncloned: for the checks made as a write lands. */
  latestRecords(): Iterable<ShardRecord> {
    return this.latest.values();
  }

  /** The record as stored, outside the scheduler: for the invariants checked after a schedule. */
  inspect(shard: ShardRef): Promise<ShardRecord | undefined> {
    return super.getRecord(shard);
  }
}

export class SimulatedCoordinatorStore extends MemoryCoordinatorStore {
  /** Called with each rollback request an update adds, as it lands: for the invariants that hold at that moment. */
  onRollbackRequested: (request: RollbackRequest) => Promise<void> = () => Promise.resolve();

  constructor(
    private readonly io: TwinIo,
    private readonly checks: OnlineChecks,
  ) {
    super();
  }

  override get(): Promise<CoordinatorRecord> {
    return this.io.call('GetItem', () => super.get());
  }

  override update(record: CoordinatorRecord): Promise<boolean> {
    return this.io.call('PutItem', async () => {
      const current = await super.get();
      const before = current.rollbacks ?? [];
      if (!(await super.update(record))) return false;
      this.checks.coordinatorWritten(current, record);
      for (const request of record.rollbacks ?? []) {
        if (!before.some((known) => isRollbackOf(known, request, request.epoch))) await this.onRollbackRequested(request);
      }
      return true;
    });
  }

  inspect(): Promise<CoordinatorRecord> {
    return super.get();
  }
}

export class SimulatedSnapshotStore extends MemorySnapshotStore {
  /** The same objects outside the scheduler: for the invariants checked after a schedule. */
  readonly unscheduled: SnapshotStore = {
    put: (key, body) => super.put(key, body),
    get: (key) => super.get(key),
    list: (prefix) => super.list(prefix),
    delete: (keys) => super.delete(keys),
    requests: this.requests,
    uniqueId: () => this.uniqueId(),
  };

  /** Each rewrite of a manifest that changed what it restores: a checkpoint's manifest means one cut. */
  readonly rewrites: string[] = [];

  constructor(
    private readonly io: TwinIo,
    private readonly maxParallelism: number,
    /** The schedule's stream of ids, so that a seed fixes every object's key too. */
    private readonly ids: () => number,
  ) {
    super();
  }

  override readonly uniqueId = (): string =>
    Array.from({ length: 4 }, () => Math.floor(this.ids() * 2 ** 32).toString(16).padStart(8, '0')).join('-');

  override put(key: string, body: Buffer | string): Promise<void> {
    return this.io.call('PutObject', async () => {
      const before = await this.restores(key);
      await super.put(key, body);
      const after = await this.restores(key);
      if (!before || !after) return;
      const changed = [...new Set([...before.keys(), ...after.keys()])].filter((shard) => before.get(shard) !== after.get(shard));
      if (changed.length > 0) this.rewrites.push(`${key} rewritten to restore other state for ${changed.join(', ')}`);
    });
  }

  /** What a manifest restores, by shard, as text to compare: the stage watermarks, and each shard's position, transactions and merged state. */
  private async restores(key: string): Promise<Map<string, string> | undefined> {
    if (!key.endsWith('/manifest.json')) return undefined;
    const manifest = await readManifest(this.unscheduled, key);
    if (!manifest) return undefined;
    const shards = new Map([['watermarks', JSON.stringify(manifest.watermarks)]]);
    for (const { state, ...position } of manifest.shards) {
      const merged = await readShardState(this.unscheduled, state, this.maxParallelism);
      const restored = [...merged].map(([serialized, entry]) => [serialized, entry.state]).sort();
      shards.set(`${position.stageId}/${position.topic}/${position.partition}`, JSON.stringify({ ...position, state: restored }));
    }
    return shards;
  }

  override get(key: string): Promise<Buffer | undefined> {
    return this.io.call('GetObject', () => super.get(key));
  }

  override list(prefix: string): Promise<string[]> {
    return this.io.call('ListObjectsV2', () => super.list(prefix));
  }

  override delete(keys: readonly string[]): Promise<void> {
    return this.io.call('DeleteObjects', () => super.delete(keys));
  }
}
