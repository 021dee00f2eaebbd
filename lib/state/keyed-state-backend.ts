import type { KeyRef } from './keys.js';

/**
 * Where keyed state lives: one value per (state, key), grouped by the key's key group. The
 * operators read and write it synchronously; a durable backend loads the keys of a batch
 * before the batch runs and writes what changed after it, so that state costs requests per
 * key per batch, not per record. State ids are `<operator name>/<state name>`. Key groups
 * are the unit in which state moves when a stage's shard count changes.
 */
export interface KeyedStateBackend {
  get(stateId: string, key: KeyRef): unknown;
  put(stateId: string, key: KeyRef, value: unknown): void;
  remove(stateId: string, key: KeyRef): void;
}

/** One entry of keyed state, as snapshots and restores move it. */
export interface StateEntry {
  readonly stateId: string;
  readonly keyGroup: number;
  readonly key: string;
  readonly value: unknown;
}

/** Keeps everything in memory: for tests, the harness and offline experiments. */
export class MemoryStateBackend implements KeyedStateBackend {
  /** key group → state id → serialized key → value */
  private readonly groups = new Map<number, Map<string, Map<string, unknown>>>();

  get(stateId: string, key: KeyRef): unknown {
    return this.groups.get(key.keyGroup)?.get(stateId)?.get(key.serialized);
  }

  put(stateId: string, key: KeyRef, value: unknown): void {
    let group = this.groups.get(key.keyGroup);
    if (!group) this.groups.set(key.keyGroup, (group = new Map<string, Map<string, unknown>>()));
    let state = group.get(stateId);
    if (!state) group.set(stateId, (state = new Map<string, unknown>()));
    state.set(key.serialized, value);
  }

  remove(stateId: string, key: KeyRef): void {
    const group = this.groups.get(key.keyGroup);
    const state = group?.get(stateId);
    state?.delete(key.serialized);
    if (state?.size === 0) group?.delete(stateId);
    if (group?.size === 0) this.groups.delete(key.keyGroup);
  }

  /** Every (key, value) of one state, keys as their JSON text, for inspection. */
  entries(stateId: string): [string, unknown][] {
    return [...this.groups.values()].flatMap((group) => [...(group.get(stateId) ?? [])]);
  }

  /** Every entry whose key group is in `[from, to]`: what one shard owns after a rescale. */
  entriesOfKeyGroups(from: number, to: number): StateEntry[] {
    const result: StateEntry[] = [];
    for (const [keyGroup, group] of this.groups) {
      if (keyGroup < from || keyGroup > to) continue;
      for (const [stateId, state] of group) {
        for (const [key, value] of state) result.push({ stateId, keyGroup, key, value });
      }
    }
    return result;
  }
}
