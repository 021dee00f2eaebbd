import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  compactShardState,
  readShardState,
  STATE_MERGE_FAN_IN,
  stateDeltaBody,
  stateObjectLevel,
  storeStateSources,
  writeStateDelta,
  type StateDelta,
  type StateSource,
} from '../../../lib/snapshot/checkpoint-state.js';
import { LocalFolderSnapshotStore } from '../../../lib/snapshot/local-folder-store.js';
import { keyRef } from '../../../lib/state/keys.js';

const MAX_PARALLELISM = 128;
const shard = { stage: 'totals', shard: 0 };
let folder: string;
let store: LocalFolderSnapshotStore;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'sluice-merging-'));
  store = new LocalFolderSnapshotStore(folder);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

let epoch = 0;
/** One invocation's delta: each key set to its value, or cleared when the value is null. */
function delta(changes: Record<string, number | null>): Promise<string> {
  return writeStateDelta(store, shard, {
    epoch: ++epoch,
    offsetBefore: null,
    executorBefore: null,
    changes: Object.entries(changes).map(([key, total]) => ({
      key: keyRef(key, MAX_PARALLELISM),
      state: total === null ? null : { total },
    })),
  });
}

async function stateOf(objects: readonly string[]): Promise<Record<string, unknown>> {
  const state = await readShardState(store, objects, MAX_PARALLELISM);
  return Object.fromEntries([...state.values()].map(({ key, state: value }): [string, unknown] => [String(key.value), value.total]));
}

describe('merging state objects at checkpoints', () => {
  it('leaves fewer than FAN_IN deltas alone and merges FAN_IN of them into one object of level 1', async () => {
    const deltas = [];
    for (let i = 0; i < STATE_MERGE_FAN_IN; i++) deltas.push(await delta({ [`k${i % 3}`]: i }));
    const short = deltas.slice(0, -1);
    expect(await compactShardState(store, shard, short, MAX_PARALLELISM)).toEqual(short);

    const merged = await compactShardState(store, shard, deltas, MAX_PARALLELISM);
    expect(merged).toHaveLength(1);
    expect(stateObjectLevel(merged[0] ?? '')).toBe(1);
    expect(await stateOf(merged)).toEqual(await stateOf(deltas));
  });

  it('carries merges up a level without reading the older, larger objects', async () => {
    const whole = await writeStateDelta(store, shard, {
      epoch: null,
      offsetBefore: null,
      executorBefore: null,
      changes: Array.from({ length: 1_000 }, (_, i) => ({ key: keyRef(`k${i}`, MAX_PARALLELISM), state: { total: -i } })),
    });
    let chain = [whole];
    const all = [whole];
    for (let checkpoint = 0; checkpoint < STATE_MERGE_FAN_IN * STATE_MERGE_FAN_IN; checkpoint++) {
      const object = await delta({ [`k${checkpoint}`]: checkpoint, hot: checkpoint });
      all.push(object);
      const readsBefore = store.requests.gets;
      chain = await compactShardState(store, shard, [...chain, object], MAX_PARALLELISM);
      // Never the 1,000-key object: a merge reads only the newer objects it replaces.
      expect(store.requests.gets - readsBefore).toBeLessThanOrEqual(STATE_MERGE_FAN_IN * 2);
      expect(chain.length).toBeLessThanOrEqual(1 + 2 * (STATE_MERGE_FAN_IN - 1) + 1);
    }
    expect(chain[0]).toBe(whole);
    expect(chain.slice(1).map(stateObjectLevel)).toEqual([2]);
    expect(await stateOf(chain)).toEqual(await stateOf(all));
  });

  it('keeps a cleared key cleared when the object holding its older value stays unmerged', async () => {
    const older = await delta({ gone: 1, kept: 1 });
    const chain = [older];
    for (let i = 0; i < STATE_MERGE_FAN_IN - 1; i++) chain.push(await delta({ kept: i + 2 }));
    const padded = await compactShardState(store, shard, chain, MAX_PARALLELISM);
    expect(padded).toHaveLength(1);

    const next = [...padded];
    next.push(await delta({ gone: null }));
    for (let i = 0; i < STATE_MERGE_FAN_IN - 1; i++) next.push(await delta({ kept: 100 + i }));
    const merged = await compactShardState(store, shard, next, MAX_PARALLELISM);
    expect(merged.map(stateObjectLevel)).toEqual([1, 1]);
    expect(await stateOf(merged)).toEqual({ kept: 100 + STATE_MERGE_FAN_IN - 2 });
  });

  it('writes each run of inline deltas as one object in its place, so the chain restores to the same state', async () => {
    const inline = (changes: Record<string, number | null>): StateDelta =>
      stateDeltaBody({
        epoch: ++epoch,
        offsetBefore: null,
        executorBefore: null,
        changes: Object.entries(changes).map(([key, total]) => ({ key: keyRef(key, MAX_PARALLELISM), state: total === null ? null : { total } })),
      });
    const sources: StateSource[] = [await delta({ a: 1, b: 1 }), inline({ a: 2 }), inline({ b: null, c: 2 }), await delta({ a: 3 }), inline({ a: 4, d: 4 })];
    const objects = await storeStateSources(store, shard, sources, MAX_PARALLELISM);
    expect(objects).toHaveLength(4);
    expect([objects[0], objects[2]]).toEqual([sources[0], sources[3]]);
    expect(await stateOf(objects)).toEqual({ a: 4, c: 2, d: 4 });
    // The run keeps its cleared key, to hide the older object's value.
    expect(await stateOf(objects.slice(0, 2))).toEqual({ a: 2, c: 2 });
  });
});
