// The behaviour every ShardStore must have (lib/state/shard-store.ts): run against the
// in-memory store and against DynamoDB (dynalite), so that both keep one protocol.
import { describe, expect, it } from 'vitest';
import { keyRef, type KeyRef } from '../../../lib/state/keys.js';
import { noise } from '../../helpers/noise.js';
import { bucketOf, DENSE_PACK_LIVE_BYTES, MAX_CHUNK_BYTES, PACK_LIVE_BYTES, packHash, SPILL_STATE_BYTES, type PackOptions } from '../../../lib/state/packs.js';
import {
  deflateJson,
  KeyStateTooLargeError,
  MAX_KEY_STATE_BYTES,
  MAX_PROGRESS_BYTES,
  ShardProgressTooLargeError,
  ShardFencedError,
  type ItemShardStore,
  type KeyState,
  type ShardClaim,
  type ShardRef,
} from '../../../lib/state/shard-store.js';

const key = (name: string): KeyRef => keyRef(name, 128);

/** What a value takes as a record or a pack stores it. */
const storedBytes = (value: unknown): number => deflateJson(JSON.stringify(value)).length;

async function readAll(store: ItemShardStore, claim: ShardClaim, names: string[]): Promise<Record<string, KeyState | undefined>> {
  const states = await store.read(claim, names.map(key));
  return Object.fromEntries(names.map((name) => [name, states.get(key(name).serialized)]));
}

async function commitBatch(store: ItemShardStore, shard: ShardRef, values: Record<string, number | null>, progress: unknown) {
  const claim = await store.claim(shard);
  await store.read(claim, Object.keys(values).map(key));
  await store.write(
    claim,
    Object.entries(values).map(([name, n]) => ({ key: key(name), state: n === null ? null : { count: n } })),
  );
  await store.commit(claim, progress);
  return claim;
}

/** Packs that split as keys grow whatever share of them a batch changes. */
const FINE_PACKS_ONLY: PackOptions = { denseLiveBytesPerPack: PACK_LIVE_BYTES };

/**
 * `largeBatch`: the key count of the atomic-commit test (default 10,000; a slow emulator
 * runs it smaller, the protocol being the same).
 */
export function shardStoreContract(name: string, createStore: (packing?: PackOptions) => Promise<ItemShardStore>, largeBatch = 10_000): void {
  let shards = 0;
  const newShard = (): ShardRef => ({ stage: `stage-${name}`, shard: shards++ });

  describe(`${name}: the shard store protocol`, () => {
    it('starts a shard at epoch 1 with nothing committed', async () => {
      const store = await createStore();
      const claim = await store.claim(newShard());
      expect(claim).toMatchObject({ epoch: 1, committedEpoch: 0, abortedEpochs: [], progress: undefined });
      expect(await readAll(store, claim, ['a'])).toEqual({ a: undefined });
    });

    it('holds a key state larger than an item in chunks, an item each, the largest a chunk stores twice over', async () => {
      const store = await createStore();
      const shard = newShard();
      // Two commits: each chunk's item then holds its slice of the new state and of the previous one.
      const large = (fill: string) => ({ note: noise(fill, 3 * MAX_CHUNK_BYTES) });
      for (const fill of ['a', 'b']) {
        const claim = await store.claim(shard);
        await store.read(claim, [key('big')]);
        const writes = store.requests.itemWrites;
        await store.write(claim, [{ key: key('big'), state: large(fill) }]);
        // Its pack's marker and at least three chunks: base64 deflates to three quarters.
        expect(store.requests.itemWrites - writes).toBeGreaterThanOrEqual(4);
        await store.commit(claim, { fill });
      }
      expect((await readAll(store, await store.claim(shard), ['big'])).big).toEqual(large('b'));
    });

    it('reads a chunked state as its last commit wrote it, over an epoch that grew it and never committed, and as it shrinks and grows', async () => {
      const store = await createStore({ chunkBytes: 1_024 });
      const shard = newShard();
      const large = (fill: string, length: number) => ({ note: noise(fill, length) });
      const writeBig = async (state: KeyState | null, commits = true) => {
        const claim = await store.claim(shard);
        await store.read(claim, [key('big')]);
        await store.write(claim, [{ key: key('big'), state }]);
        if (commits) await store.commit(claim, { state: state === null ? 'cleared' : 'written' });
      };
      const big = async () => (await readAll(store, await store.claim(shard), ['big'])).big;
      await writeBig(large('a', 6_000));
      expect(await big()).toEqual(large('a', 6_000));
      await writeBig(large('b', 3_000));
      await writeBig(large('c', 12_000), false);
      expect(await big()).toEqual(large('b', 3_000));
      await writeBig({ count: 1 });
      expect(await big()).toEqual({ count: 1 });
      await writeBig(large('d', 9_000));
      await writeBig(large('e', 2_000), false);
      expect(await big()).toEqual(large('d', 9_000));
      await writeBig(null);
      expect(await big()).toBeUndefined();
    });

    it('refuses a key state over the limit deflated before writing anything, naming its size', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { big: 1 }, { offset: 1 });
      const claim = await store.claim(shard);
      await store.read(claim, [key('big'), key('small')]);
      const tooLarge = { note: noise('c', MAX_KEY_STATE_BYTES * 1.5) };
      const refused = store.write(claim, [
        { key: key('small'), state: { count: 1 } },
        { key: key('big'), state: tooLarge },
      ]);
      await expect(refused).rejects.toBeInstanceOf(KeyStateTooLargeError);
      await expect(refused).rejects.toThrow(
        `would take ${storedBytes(tooLarge)} bytes deflated, more than the ${MAX_KEY_STATE_BYTES} a key may hold`,
      );
      await store.commit(claim, { offset: 2 });
      expect(await readAll(store, await store.claim(shard), ['big', 'small'])).toEqual({ big: { count: 1 }, small: undefined });
    });

    it('counts a key state as its items store it: state whose JSON is twice a chunk but deflates within one takes one item', async () => {
      const store = await createStore();
      const shard = newShard();
      const repetitive = { notes: Array.from({ length: 10_000 }, (_, i) => ({ customer: i % 7, text: 'the same note again' })) };
      expect(Buffer.byteLength(JSON.stringify(repetitive))).toBeGreaterThan(2 * MAX_CHUNK_BYTES);
      await commitBatch(store, shard, {}, { offset: 1 });
      const claim = await store.claim(shard);
      await store.read(claim, [key('big')]);
      const writes = store.requests.itemWrites;
      await store.write(claim, [{ key: key('big'), state: repetitive }]);
      expect(store.requests.itemWrites - writes).toBe(2);
      await store.commit(claim, { offset: 2 });
      expect((await readAll(store, await store.claim(shard), ['big'])).big).toEqual(repetitive);
    });

    it('refuses a commit whose progress outgrows the record deflated, naming its size, and keeps the committed one', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      const timers = Array.from({ length: 60_000 }, (_, i) => ({ key: `"bidder-${i}"`, time: 1_796_000_000_000 + i }));
      const held = { offset: 2, timers };
      expect(Buffer.byteLength(JSON.stringify(held))).toBeGreaterThan(MAX_PROGRESS_BYTES);
      await store.commit(await store.claim(shard), held);
      expect(await store.claim(shard)).toMatchObject({ progress: held });

      const claim = await store.claim(shard);
      const tooLarge = { offset: 3, timers: noise('t', MAX_PROGRESS_BYTES * 1.5) };
      const refused = store.commit(claim, tooLarge);
      await expect(refused).rejects.toBeInstanceOf(ShardProgressTooLargeError);
      await expect(refused).rejects.toThrow(
        `its progress would take ${storedBytes(tooLarge)} bytes deflated, more than the ${MAX_PROGRESS_BYTES} its record may hold`,
      );
      expect(await store.claim(shard)).toMatchObject({ progress: held });
    });

    it('makes state and progress visible together at commit', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1, b: 2 }, { offset: 10 });
      const next = await store.claim(shard);
      expect(next).toMatchObject({ epoch: 2, committedEpoch: 1, progress: { offset: 10 } });
      expect(await readAll(store, next, ['a', 'b', 'c'])).toEqual({ a: { count: 1 }, b: { count: 2 }, c: undefined });
    });

    it('never shows the writes of an attempt that did not commit, even for keys nobody writes again', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1, b: 1 }, { offset: 1 });
      const crashed = await store.claim(shard);
      await store.read(crashed, [key('a'), key('b')]);
      await store.write(crashed, [
        { key: key('a'), state: { count: 99 } },
        { key: key('b'), state: { count: 99 } },
      ]);
      // The attempt dies here. Its successor writes only a.
      const retry = await store.claim(shard);
      expect(retry.abortedEpochs).toEqual([[crashed.epoch, crashed.epoch]]);
      expect(retry.progress).toEqual({ offset: 1 });
      expect(await readAll(store, retry, ['a', 'b'])).toEqual({ a: { count: 1 }, b: { count: 1 } });
      await store.write(retry, [{ key: key('a'), state: { count: 2 } }]);
      await store.commit(retry, { offset: 2 });
      const later = await store.claim(shard);
      expect(await readAll(store, later, ['a', 'b'])).toEqual({ a: { count: 2 }, b: { count: 1 } });
    });

    it('fences a zombie: its commit fails and its writes stay invisible', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      const zombie = await store.claim(shard);
      await store.read(zombie, [key('a'), key('z')]);
      const owner = await store.claim(shard);
      await store.read(owner, [key('a')]);
      await store.write(owner, [{ key: key('a'), state: { count: 2 } }]);
      await store.commit(owner, { offset: 2 });

      await expect(store.write(zombie, [{ key: key('a'), state: { count: 66 } }])).rejects.toBeInstanceOf(ShardFencedError);
      // z shares a's pack, which the owner wrote: refused too. Had it landed, it would stay invisible.
      await expect(store.write(zombie, [{ key: key('z'), state: { count: 66 } }])).rejects.toBeInstanceOf(ShardFencedError);
      await expect(store.commit(zombie, { offset: 66 })).rejects.toBeInstanceOf(ShardFencedError);

      const later = await store.claim(shard);
      expect(later.progress).toEqual({ offset: 2 });
      expect(await readAll(store, later, ['a', 'z'])).toEqual({ a: { count: 2 }, z: undefined });
    });

    it('keeps the committed value when a zombie writes a key between the owner’s read and write', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      const zombie = await store.claim(shard);
      await store.read(zombie, [key('a')]);
      const owner = await store.claim(shard);
      await store.read(owner, [key('a')]);
      await store.write(zombie, [{ key: key('a'), state: { count: 66 } }]);
      await store.write(owner, [{ key: key('b'), state: { count: 5 } }]);
      await store.commit(owner, { offset: 2 });
      const later = await store.claim(shard);
      expect(await readAll(store, later, ['a', 'b'])).toEqual({ a: { count: 1 }, b: { count: 5 } });
      await store.write(later, [{ key: key('a'), state: { count: 3 } }]);
      await store.commit(later, { offset: 3 });
      expect(await readAll(store, await store.claim(shard), ['a'])).toEqual({ a: { count: 3 } });
    });

    it('reads the batch’s keys beside a claim over its own last commit, and keeps what a zombie writes after that read invisible', async () => {
      const store = await createStore(FINE_PACKS_ONLY);
      const shard = newShard();
      // Enough keys for many packs, so that a zombie can write a pack the last commit did not.
      const seeded = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
      await commitBatch(store, shard, seeded, { offset: 1 });
      const zombie = await store.claim(shard);
      const { layout } = zombie;
      expect(layout.buckets).toBeGreaterThan(1);
      const packOf = (name: string) => bucketOf(packHash(key(name).serialized), layout.buckets);
      const c = Object.keys(seeded).find((name) => name !== 'k1' && packOf(name) !== packOf('k0')) ?? 'none';
      await store.read(zombie, [key(c)]);
      await commitBatch(store, shard, { k0: 100 }, { offset: 2 });
      const requestsBefore = store.requests.itemReadRequests;
      const owner = await store.claim(shard, [key('k0'), key(c)]);
      expect(store.requests.itemReadRequests - requestsBefore).toBe(1);
      // After the claim's read of the keys, before the owner reads them: its copy of c's pack is stale.
      await store.write(zombie, [{ key: key(c), state: { count: 66 } }]);
      expect(await readAll(store, owner, ['k0', c])).toEqual({ k0: { count: 100 }, [c]: { count: seeded[c] } });
      expect(store.requests.itemReadRequests - requestsBefore).toBe(1);
      await store.write(owner, [
        { key: key('k0'), state: { count: 101 } },
        { key: key(c), state: { count: 5 } },
      ]);
      await store.commit(owner, { offset: 3 });
      await expect(store.commit(zombie, { offset: 66 })).rejects.toBeInstanceOf(ShardFencedError);
      expect(await readAll(store, await store.claim(shard), ['k0', c, 'k1'])).toEqual({ k0: { count: 101 }, [c]: { count: 5 }, k1: { count: 1 } });
    });

    it('reads the batch’s keys after a claim that is not over its own last commit', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      // A claim that never commits: the next one cannot claim over the last commit's copy.
      await store.claim(shard);
      const owner = await store.claim(shard, [key('a')]);
      const requestsBefore = store.requests.itemReadRequests;
      expect(await readAll(store, owner, ['a'])).toEqual({ a: { count: 1 } });
      expect(store.requests.itemReadRequests - requestsBefore).toBe(1);
    });

    it('keeps the committed value when the caller changes what it read in place and then crashes', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, {});
      const crashed = await store.claim(shard);
      const read = await store.read(crashed, [key('a')]);
      const state = read.get(key('a').serialized) as { count: number };
      state.count = 99;
      await store.write(crashed, [{ key: key('a'), state }]);
      expect(await readAll(store, await store.claim(shard), ['a'])).toEqual({ a: { count: 1 } });
    });

    it('treats a commit that landed but reported failure (an ambiguous error, retried) as done', async () => {
      const store = await createStore();
      const shard = newShard();
      const claim = await store.claim(shard);
      await store.write(claim, [{ key: key('a'), state: { count: 1 } }]);
      await store.commit(claim, { offset: 1 });
      // What the retry of a commit whose response was lost sees: its own commit, already there.
      await store.commit(claim, { offset: 1 });
      expect(await readAll(store, await store.claim(shard), ['a'])).toEqual({ a: { count: 1 } });
    });

    it('takes the repeat of a commit that landed for done even after a newer claim, and writes nothing', async () => {
      const store = await createStore();
      const shard = newShard();
      const claim = await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      const newer = await store.claim(shard);
      await store.commit(claim, { offset: 1 });
      expect((await store.peek(shard))?.progress).toEqual({ offset: 1 });
      await store.commit(newer, { offset: 2 });
      expect((await store.peek(shard))?.progress).toEqual({ offset: 2 });
    });

    it('lets two racing claims through one at a time, with distinct epochs', async () => {
      const store = await createStore();
      const shard = newShard();
      const [first, second] = await Promise.all([store.claim(shard), store.claim(shard)]);
      expect(new Set([first.epoch, second.epoch]).size).toBe(2);
      const [older, newer] = first.epoch < second.epoch ? [first, second] : [second, first];
      await expect(store.commit(older, {})).rejects.toBeInstanceOf(ShardFencedError);
      await store.commit(newer, { by: newer.epoch });
    });

    it('treats cleared state as absent', async () => {
      const store = await createStore();
      const shard = newShard();
      await commitBatch(store, shard, { a: 1 }, {});
      await commitBatch(store, shard, { a: null }, {});
      expect(await readAll(store, await store.claim(shard), ['a'])).toEqual({ a: undefined });
    });

    it('splits its packs as its keys grow, and a split that never commits leaves the shard as it was', async () => {
      const store = await createStore(FINE_PACKS_ONLY);
      const shard = newShard();
      const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `key-${from + i}`);
      const states = (list: string[], count: (i: number) => number | undefined) =>
        Object.fromEntries(list.map((name, i) => [name, count(i) === undefined ? undefined : { count: count(i) }]));
      await commitBatch(store, shard, Object.fromEntries(names(0, 20).map((name, i) => [name, i])), { offset: 1 });
      const crashed = await store.claim(shard);
      await store.read(crashed, names(0, 500).map(key));
      await store.write(crashed, names(10, 500).map((name) => ({ key: key(name), state: { count: -1 } })));
      // The attempt dies here, with its split packs written.
      const retry = await store.claim(shard);
      expect(retry.layout).toEqual(crashed.layout);
      expect(await readAll(store, retry, names(0, 500))).toEqual(states(names(0, 500), (i) => (i < 20 ? i : undefined)));
      await store.write(retry, names(5, 300).map((name, i) => ({ key: key(name), state: { count: 1_000 + i } })));
      await store.commit(retry, { offset: 2 });
      const grown = await store.claim(shard);
      expect(grown.layout.buckets).toBeGreaterThan(8);
      const expected = states(names(0, 500), (i) => (i < 5 ? i : i < 300 ? 995 + i : undefined));
      expect(await readAll(store, grown, names(0, 500))).toEqual(expected);
      // A second split, over the first: every key still where a reader looks for it.
      await store.write(grown, names(300, 1_500).map((name) => ({ key: key(name), state: { count: 7 } })));
      await store.commit(grown, { offset: 3 });
      const later = await store.claim(shard);
      expect(later.layout.buckets).toBeGreaterThan(grown.layout.buckets);
      expect(await readAll(store, later, names(0, 1_500))).toEqual({ ...expected, ...states(names(300, 1_500), () => 7) });
    });

    it('lays a restored shard out by the state the restore writes, not by that and the state it deleted', async () => {
      const store = await createStore(FINE_PACKS_ONLY);
      const shard = newShard();
      const values = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key-${i}`, i]));
      await commitBatch(store, shard, values, { offset: 1 });
      const before = await store.claim(shard);
      await store.commit(before, { offset: 1 });

      const restoring = await store.claim(shard, [], { replacingState: true });
      // Until the restore commits, the shard keeps its layout: a restore that dies here leaves it readable.
      expect((await store.peek(shard))?.layout).toEqual(before.layout);
      await store.deleteKeyedState();
      await store.read(restoring, Object.keys(values).map(key));
      await store.write(restoring, Object.entries(values).map(([name, n]) => ({ key: key(name), state: { count: n } })));
      await store.commit(restoring, { offset: 1 });

      const restored = await store.claim(shard);
      expect(restored.layout.liveBytes).toBe(before.layout.liveBytes);
      expect(restored.layout.buckets).toBe(before.layout.buckets);
      expect(await readAll(store, restored, Object.keys(values))).toEqual(Object.fromEntries(Object.entries(values).map(([name, n]) => [name, { count: n }])));
    });

    it('moves a key between its pack and an item of its own as its state grows and shrinks, through attempts that never commit', async () => {
      const store = await createStore();
      const shard = newShard();
      const large = (fill: string) => ({ note: fill.repeat(SPILL_STATE_BYTES) });
      const attempt = async (state: KeyState | null, commits: boolean) => {
        const claim = await store.claim(shard);
        await store.read(claim, [key('k'), key('neighbour')]);
        await store.write(claim, [{ key: key('k'), state }]);
        if (commits) await store.commit(claim, {});
      };
      const visible = async () => (await readAll(store, await store.claim(shard), ['k', 'neighbour'])).k;
      await commitBatch(store, shard, { neighbour: 1 }, {});
      await attempt(large('a'), true);
      expect(await visible()).toEqual(large('a'));
      await attempt(large('b'), false);
      await attempt({ count: 3 }, false);
      expect(await visible()).toEqual(large('a'));
      await attempt({ count: 3 }, true);
      await attempt(large('c'), false);
      expect(await visible()).toEqual({ count: 3 });
      await attempt(large('d'), true);
      await attempt({ count: 5 }, false);
      expect(await visible()).toEqual(large('d'));
      await attempt(null, true);
      expect(await readAll(store, await store.claim(shard), ['k', 'neighbour'])).toEqual({ k: undefined, neighbour: { count: 1 } });
    });

    it(`commits ${largeBatch.toLocaleString('en')} keys atomically, packed several to an item`, async () => {
      const store = await createStore();
      const shard = newShard();
      const names = Array.from({ length: largeBatch }, (_, i) => `customer-${i}`);
      const crashed = await store.claim(shard);
      await store.read(crashed, names.map(key));
      await store.write(crashed, names.map((n) => ({ key: key(n), state: { count: 1 } })));
      const retry = await store.claim(shard);
      const seen = await store.read(retry, names.map(key));
      expect(seen.size).toBe(0);

      const before = { ...store.requests };
      await store.write(retry, names.map((n) => ({ key: key(n), state: { count: 2 } })));
      await store.commit(retry, { offset: largeBatch });
      const packsWritten = store.requests.itemWrites - before.itemWrites;
      expect(store.requests.recordWrites - before.recordWrites).toBe(1);

      const check = await store.claim(shard);
      // A batch that changes every key takes dense packs: a few large items, billed by their bytes.
      expect(check.layout.buckets).toBe(packsWritten);
      expect(packsWritten).toBeLessThanOrEqual(Math.ceil(check.layout.liveBytes / DENSE_PACK_LIVE_BYTES));
      expect(store.requests.writeUnits - before.writeUnits).toBeLessThanOrEqual(Math.ceil((check.layout.liveBytes * 2) / 1024) + packsWritten + 1);
      const readsBefore = store.requests.itemReadRequests;
      const states = await store.read(check, names.map(key));
      expect(store.requests.itemReadRequests - readsBefore).toBe(Math.ceil(packsWritten / 100));
      expect(states.size).toBe(largeBatch);
      expect([...states.values()].every((s) => (s as { count: number }).count === 2)).toBe(true);
    });

    it('splits dense packs into fine ones when batches change few of the keys, at about a write unit per changed key', async () => {
      const store = await createStore();
      const shard = newShard();
      const keys = Math.min(largeBatch, 2_000);
      const expected = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`customer-${i}`, 1]));
      await commitBatch(store, shard, expected, {});
      const dense = (await store.claim(shard)).layout.buckets;

      let last = { itemWrites: 0, writeUnits: 0 };
      for (let batch = 0; batch < 12; batch++) {
        const changed = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`customer-${(batch * 337 + i * 191) % keys}`, batch + 10]));
        Object.assign(expected, changed);
        const before = { ...store.requests };
        await commitBatch(store, shard, changed, {});
        last = { itemWrites: store.requests.itemWrites - before.itemWrites, writeUnits: store.requests.writeUnits - before.writeUnits };
      }
      const fine = (await store.claim(shard)).layout;
      expect(fine.buckets).toBeGreaterThanOrEqual(Math.ceil(fine.liveBytes / PACK_LIVE_BYTES));
      expect(fine.buckets).toBeGreaterThan(dense * 10);
      // The last batch: ten keys, a pack each at most, about a unit each (a bucket not split yet
      // holds twice a split one's keys), and the shard record's.
      expect(last.itemWrites).toBeLessThanOrEqual(10);
      expect(last.writeUnits).toBeLessThanOrEqual(Math.ceil(last.itemWrites * 1.5) + 1);
      expect(await readAll(store, await store.claim(shard), Object.keys(expected))).toEqual(
        Object.fromEntries(Object.entries(expected).map(([name, count]) => [name, { count }])),
      );
    });
  });
}
