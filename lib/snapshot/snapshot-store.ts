import { randomUUID } from 'node:crypto';
/**
 * Where checkpoints and savepoints are kept: immutable objects under string keys. Sluice
 * never overwrites an object it relies on — every object's key is unique to what wrote it
 * (checkpoint, shard, epoch) and a checkpoint counts only once its manifest is written last —
 * so the protocol needs no conditional writes (which s3rver, the local emulator, ignores).
 */
export interface SnapshotStore {
  put(key: string, body: Buffer | string): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Buffer | undefined>;
  /** Every key that starts with `prefix`, in lexicographic order. */
  list(prefix: string): Promise<string[]>;
  delete(keys: readonly string[]): Promise<void>;
  /** Requests made so far, for the cost metrics. */
  readonly requests: SnapshotRequestCounts;
  /**
   * A name part no other object of the store has or will have, for objects written once under
   * a fresh key (state deltas, merges): random, except in the simulation, whose ids come from
   * its seed like every other draw.
   */
  uniqueId(): string;
}

/** {@link SnapshotStore.uniqueId} for a real store. */
export function randomUniqueId(): string {
  return randomUUID();
}

export interface SnapshotRequestCounts {
  puts: number;
  gets: number;
  lists: number;
  deletes: number;
}

export function newRequestCounts(): SnapshotRequestCounts {
  return { puts: 0, gets: 0, lists: 0, deletes: 0 };
}

/** Keys are relative paths: no leading slash, no `.` or `..` segments, no empty segments. */
export function checkSnapshotKey(key: string): string {
  if (key === '' || key.startsWith('/') || key.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new Error(`"${key}" is not a valid snapshot key: use a relative path like checkpoints/12/manifest.json`);
  }
  return key;
}
