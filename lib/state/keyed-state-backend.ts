/**
 * Where keyed state lives: one value per (state, key). The operators read and write it
 * synchronously; a durable backend loads the keys of a batch before the batch runs and
 * writes what changed after it, so that state costs requests per key per batch, not per
 * record. State ids are `<operator name>/<state name>`.
 */
export interface KeyedStateBackend {
  get(stateId: string, key: string): unknown;
  put(stateId: string, key: string, value: unknown): void;
  remove(stateId: string, key: string): void;
}

/** Keeps everything in memory: for tests, the harness and offline experiments. */
export class MemoryStateBackend implements KeyedStateBackend {
  private readonly states = new Map<string, Map<string, unknown>>();

  get(stateId: string, key: string): unknown {
    return this.states.get(stateId)?.get(key);
  }

  put(stateId: string, key: string, value: unknown): void {
    let state = this.states.get(stateId);
    if (!state) this.states.set(stateId, (state = new Map<string, unknown>()));
    state.set(key, value);
  }

  remove(stateId: string, key: string): void {
    const state = this.states.get(stateId);
    state?.delete(key);
    if (state?.size === 0) this.states.delete(stateId);
  }

  /** Every (key, value) of one state, for inspection. */
  entries(stateId: string): [string, unknown][] {
    return [...(this.states.get(stateId) ?? [])];
  }

  stateIds(): string[] {
    return [...this.states.keys()];
  }
}
