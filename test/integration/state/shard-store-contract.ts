// The behaviour every ShardStore must have (lib/state/shard-store.ts): run against the
// in-memory store and against DynamoDB (dynalite), so that both keep one protocol.
import { describe, expect, it } from 'vitest';
import { keyRef, type KeyRef } from '../../../lib/state/keys.js';
import {
  KeyStateTooLargeError,
  MAX_KEY_STATE_BYTES,
  ShardFencedError,
  type ItemShardStore,
  type KeyState,
  type ShardClaim,
  type ShardRef,
} from '../../../lib/state/shard-store.js';

const key = (name: string): KeyRef => keyRef(name, 128);

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

/**
 * `largeBatch`: the key count of the atomic-commit test (default 10,000; a slow emulator
 * runs it smaller, the protocol being the same).
 */
export function shardStoreContract(name: string, createStore: () => Promise<ItemShardStore>, largeBatch = 10_000): void {
  let shards = 0;
  const newShard = (): ShardRef => ({ stage: `stage-${name}`, shard: shards++ });

  describe(`${name}: the shard store protocol`, () => {
    it('starts a shard at epoch 1 with nothing committed', async () => {
      const store = await createStore();
      const claim = await store.claim(newShard());
      expect(claim).toMatchObject({ epoch: 1, committedEpoch: 0, abortedEpochs: [], progress: undefined });
      expect(await readAll(store, claim, ['a'])).toEqual({ a: undefined });
    });

    it('holds a key state of the largest size allowed, twice over, and refuses a larger one before writing anything', async () => {
      const store = await createStore();
      const shard = newShard();
      const sized = (bytes: number, fill: string) => ({ note: fill.repeat(bytes - JSON.stringify({ note: '' }).length) });
      // Two commits: the item then holds the new state and the previous one, each of the largest size.
      for (const fill of ['a', 'b']) {
        const claim = await store.claim(shard);
        await store.read(claim, [key('big')]);
        await store.write(claim, [{ key: key('big'), state: sized(MAX_KEY_STATE_BYTES, fill) }]);
        await store.commit(claim, { fill });
      }
      const claim = await store.claim(shard);
      expect((await readAll(store, claim, ['big'])).big).toEqual(sized(MAX_KEY_STATE_BYTES, 'b'));
      const refused = store.write(claim, [
        { key: key('small'), state: { count: 1 } },
        { key: key('big'), state: sized(MAX_KEY_STATE_BYTES + 1, 'c') },
      ]);
      await expect(refused).rejects.toBeInstanceOf(KeyStateTooLargeError);
      await expect(refused).rejects.toThrow(/the state of key .*big.* would take 194561 bytes, more than the 194560 a key may hold/);
      await store.commit(claim, { fill: 'none' });
      expect(await readAll(store, await store.claim(shard), ['big', 'small'])).toEqual({ big: sized(MAX_KEY_STATE_BYTES, 'b'), small: undefined });
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
      await store.write(zombie, [{ key: key('z'), state: { count: 66 } }]);
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
      const store = await createStore();
      const shard = newShard();
      const zombie = await store.claim(shard);
      await store.read(zombie, [key('c')]);
      await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      const requestsBefore = store.requests.itemReadRequests;
      const owner = await store.claim(shard, [key('a'), key('c')]);
      expect(store.requests.itemReadRequests - requestsBefore).toBe(1);
      // After the claim's read of the keys, before the owner reads them: its copy of c is stale.
      await store.write(zombie, [{ key: key('c'), state: { count: 66 } }]);
      expect(await readAll(store, owner, ['a', 'c'])).toEqual({ a: { count: 1 }, c: undefined });
      expect(store.requests.itemReadRequests - requestsBefore).toBe(1);
      await store.write(owner, [
        { key: key('a'), state: { count: 2 } },
        { key: key('c'), state: { count: 5 } },
      ]);
      await store.commit(owner, { offset: 2 });
      await expect(store.commit(zombie, { offset: 66 })).rejects.toBeInstanceOf(ShardFencedError);
      expect(await readAll(store, await store.claim(shard), ['a', 'c'])).toEqual({ a: { count: 2 }, c: { count: 5 } });
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

    it('commits once per claim: a later claim fences an old one even after it committed', async () => {
      const store = await createStore();
      const shard = newShard();
      const claim = await commitBatch(store, shard, { a: 1 }, { offset: 1 });
      await store.claim(shard);
      await expect(store.commit(claim, { offset: 2 })).rejects.toBeInstanceOf(ShardFencedError);
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

    it(`commits ${largeBatch.toLocaleString('en')} keys atomically, reading and writing each key once`, async () => {
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
      expect(store.requests.itemWrites - before.itemWrites).toBe(largeBatch);
      expect(store.requests.recordWrites - before.recordWrites).toBe(1);

      const check = await store.claim(shard);
      const readsBefore = store.requests.itemReadRequests;
      const states = await store.read(check, names.map(key));
      expect(store.requests.itemReadRequests - readsBefore).toBe(Math.ceil(largeBatch / 100));
      expect(states.size).toBe(largeBatch);
      expect([...states.values()].every((s) => (s as { count: number }).count === 2)).toBe(true);
    });
  });
}
