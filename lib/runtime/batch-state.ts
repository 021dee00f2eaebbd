import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import type { KeyRef } from '../state/keys.js';
import type { KeyState, StateChange } from '../state/shard-store.js';

/**
 * The keyed state of one batch: loaded for the batch's keys before it runs, read and written
 * by the operators in memory, and handed back as one change per changed key — so that
 * durable state costs one read and at most one write per key per batch, never per record.
 */
export class BatchStateBackend implements KeyedStateBackend {
  private readonly states = new Map<string, Record<string, unknown>>();
  private readonly keys = new Map<string, KeyRef>();
  private readonly dirty = new Set<string>();
  /** What changes() last returned, until the state changes. */
  private copied: StateChange[] | undefined;

  /** Makes a key's state available to the batch (`undefined`: the key has none yet). */
  load(key: KeyRef, state: KeyState | undefined): void {
    if (this.keys.has(key.serialized)) return;
    this.keys.set(key.serialized, key);
    this.states.set(key.serialized, { ...state });
  }

  isLoaded(key: KeyRef): boolean {
    return this.keys.has(key.serialized);
  }

  private stateOf(key: KeyRef): Record<string, unknown> {
    const state = this.states.get(key.serialized);
    if (!state) {
      throw new Error(
        `Keyed state of key ${key.serialized} was not loaded for this batch: keyed state must be keyed by the ` +
          `stage's input record key (a Sluice bug if the planner allowed otherwise)`,
      );
    }
    return state;
  }

  get(stateId: string, key: KeyRef): unknown {
    return this.stateOf(key)[stateId];
  }

  put(stateId: string, key: KeyRef, value: unknown): void {
    this.stateOf(key)[stateId] = value;
    this.dirty.add(key.serialized);
    this.copied = undefined;
  }

  remove(stateId: string, key: KeyRef): void {
    const state = this.stateOf(key);
    if (!(stateId in state)) return;
    delete state[stateId];
    this.dirty.add(key.serialized);
    this.copied = undefined;
  }

  /**
   * The state of every key the batch changed; null for a key left with no state. Copied once
   * the batch has run, through the JSON the change keeps: the same copies and text serve the
   * key-size check, the writes and the delta, until a put or a remove changes the state again.
   */
  changes(): StateChange[] {
    return (this.copied ??= this.copyChanges());
  }

  private copyChanges(): StateChange[] {
    return [...this.dirty].map((serialized) => {
      const state = this.states.get(serialized) ?? {};
      const key = this.keys.get(serialized) as KeyRef;
      if (Object.keys(state).length === 0) return { key, state: null };
      const json = JSON.stringify(state);
      return { key, state: JSON.parse(json) as KeyState, json };
    });
  }
}
