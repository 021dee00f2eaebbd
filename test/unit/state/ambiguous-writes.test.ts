// Writes that land but report failure: what the SDK's retry of a request whose response was
// lost sees (ConditionalCheckFailed against its own write). Neither may take itself for fenced:
// a pack write goes on — above all the write of a new bucket, whose condition is only that no
// epoch as new wrote it — and a commit is done, whatever claims came since.
import { describe, expect, it } from 'vitest';
import { keyRef } from '../../../lib/state/keys.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import { PACK_LIVE_BYTES, type PackId, type StoredPack } from '../../../lib/state/packs.js';
import type { PackCondition, RecordCondition, ShardRecord, ShardRef } from '../../../lib/state/shard-store.js';

/** Loses the response of the first write of every pack. */
class LosingResponses extends MemoryShardStore {
  readonly lost = new Set<string>();

  protected override async putPackIf(shard: ShardRef, id: PackId, pack: StoredPack, condition: PackCondition): Promise<boolean> {
    const landed = await super.putPackIf(shard, id, pack, condition);
    if (!landed || this.lost.has(id.text)) return landed;
    this.lost.add(id.text);
    return false;
  }
}

describe('a pack write whose success was reported as a failed condition', () => {
  it('writes on, new buckets included, and commits what it meant to', async () => {
    // Fine packs only, so that the first batch splits buckets.
    const store = new LosingResponses({ denseLiveBytesPerPack: PACK_LIVE_BYTES });
    const shard = { stage: 'ambiguous', shard: 0 };
    const key = (i: number) => keyRef(`customer-${i}`, 128);
    const claim = await store.claim(shard);
    await store.write(claim, Array.from({ length: 200 }, (_, i) => ({ key: key(i), state: { count: i } })));
    await store.commit(claim, { offset: 1 });
    const later = await store.claim(shard);
    expect(later.layout.buckets).toBeGreaterThan(1);
    expect(store.lost.size).toBe(later.layout.buckets);
    const states = await store.read(later, Array.from({ length: 200 }, (_, i) => key(i)));
    expect(Object.fromEntries(states)).toEqual(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [key(i).serialized, { count: i }])));
  });
});

/** Loses the response of the first commit, and lets a newer invocation claim the shard before the commit reads the record again. */
class LosingCommitToNewerClaim extends MemoryShardStore {
  private lost = false;

  protected override async putRecordIf(shard: ShardRef, record: ShardRecord, condition: RecordCondition): Promise<boolean> {
    const landed = await super.putRecordIf(shard, record, condition);
    if (!landed || condition.kind !== 'uncommitted' || this.lost) return landed;
    this.lost = true;
    await this.claim(shard);
    return false;
  }
}

describe('a commit whose success was reported as a failed condition, with a newer claim before the reread', () => {
  it('is done, not fenced: the processor would otherwise abort a transaction the record names', async () => {
    const store = new LosingCommitToNewerClaim();
    const shard = { stage: 'ambiguous-commit', shard: 0 };
    const claim = await store.claim(shard);
    await store.write(claim, [{ key: keyRef('a', 128), state: { count: 1 } }]);
    await store.commit(claim, { offset: 1 });
    const later = await store.claim(shard);
    expect(later).toMatchObject({ epoch: claim.epoch + 2, committedEpoch: claim.epoch, progress: { offset: 1 } });
    expect(Object.fromEntries(await store.read(later, [keyRef('a', 128)]))).toEqual({ [keyRef('a', 128).serialized]: { count: 1 } });
  });
});
