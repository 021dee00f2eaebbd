import type { TransactionHandle } from '../kafka/transaction-handle.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import type { KeyState, ShardRef, StateChange } from '../state/shard-store.js';
import type { SnapshotStore } from './snapshot-store.js';

/**
 * What one committed invocation changed in its shard, as an immutable object in the snapshot
 * store (docs/PROTOCOL.md, "S3 snapshots"). A checkpoint's state is the chain of these
 * objects, so writing a checkpoint costs what changed, not the total state. The offsets and
 * executor snapshot around the change let the commit function roll the shard back to just
 * before it when its transaction is lost.
 */
export interface StateDelta {
  readonly epoch: number | null;
  readonly offsetBefore: number | null;
  readonly executorBefore: unknown;
  /** Each changed key's state after the invocation; null when it was cleared. */
  readonly changes: readonly { readonly key: unknown; readonly state: KeyState | null }[];
}

/** One shard's part of a checkpoint. */
export interface ManifestShard extends ShardPosition {
  readonly offset: number | null;
  readonly executor: unknown;
  readonly acknowledgedWatermark: number;
  /** The transactions this checkpoint commits. */
  readonly transactions: readonly TransactionHandle[];
  /** State objects, oldest first: the shard's keyed state is their merge. */
  readonly state: readonly string[];
}

export interface CheckpointManifest {
  readonly format: 1;
  readonly pipeline: string;
  readonly checkpoint: number;
  readonly createdAt: number;
  /** Each stage's watermark at the checkpoint. */
  readonly watermarks: Readonly<Record<string, number>>;
  readonly shards: readonly ManifestShard[];
}

/**
 * A checkpoint merges a shard's newest state objects into one of the next level once this
 * many of them share a level (a size-tiered merge, as in an LSM tree): a merge at level L
 * covers about FAN_IN^L deltas and happens once every FAN_IN^L checkpoints, so what merging
 * costs per checkpoint follows the changed state, and a shard lists at most about FAN_IN
 * objects per level.
 */
export const STATE_MERGE_FAN_IN = 8;

function shardPath(shard: ShardRef): string {
  return `state/${encodeURIComponent(shard.stage)}/${shard.shard}`;
}

export function checkpointManifestKey(checkpoint: number): string {
  return `${checkpointPath(checkpoint)}/manifest.json`;
}

function checkpointPath(checkpoint: number): string {
  return `checkpoints/${String(checkpoint).padStart(12, '0')}`;
}

/** Marks a checkpoint whose manifest shows a shard past a transaction the broker lost. */
export function rolledBackMarkerKey(checkpoint: number, shard: ShardRef): string {
  return `${checkpointPath(checkpoint)}/rolled-back/${encodeURIComponent(shard.stage)}-${shard.shard}.json`;
}

export async function isRolledBack(store: SnapshotStore, checkpoint: number): Promise<boolean> {
  return (await store.list(`${checkpointPath(checkpoint)}/rolled-back/`)).length > 0;
}

/** Why `name` cannot name a savepoint, or undefined when it can. */
export function savepointNameProblem(name: string): string | undefined {
  return /^[A-Za-z0-9._-]+$/.test(name) ? undefined : `"${name}" is not a valid savepoint name: use letters, digits, '.', '_' and '-'`;
}

export function savepointManifestKey(name: string): string {
  const problem = savepointNameProblem(name);
  if (problem) throw new Error(problem);
  return `savepoints/${name}/manifest.json`;
}

/**
 * A state delta as it is stored: each key as its value, ready for JSON. The processor keeps a
 * small one in the shard record instead of an object of its own (docs/PROTOCOL.md, "Inline deltas").
 */
export function stateDeltaBody(delta: Omit<StateDelta, 'changes'> & { readonly changes: readonly StateChange[] }): StateDelta {
  return { ...delta, changes: delta.changes.map(({ key: k, state }) => ({ key: k.value, state })) };
}

/**
 * Writes the changes of `epoch` and returns the object's key (unique even if epochs restart).
 * `level` names a merge of older objects; a delta without epoch or level holds a whole state.
 */
export async function writeStateDelta(
  store: SnapshotStore,
  shard: ShardRef,
  delta: Omit<StateDelta, 'changes'> & { readonly changes: readonly StateChange[] },
  level = 0,
): Promise<string> {
  return putStateDelta(store, shard, stateDeltaBody(delta), level);
}

/** Writes a delta as it is stored, under a key unique to it. */
export async function putStateDelta(store: SnapshotStore, shard: ShardRef, body: StateDelta, level = 0): Promise<string> {
  const name = level > 0 ? `level${level}` : (body.epoch ?? 'base');
  const key = `${shardPath(shard)}/${name}-${store.uniqueId()}.json`;
  await store.put(key, JSON.stringify(body));
  return key;
}

export async function readStateDelta(store: SnapshotStore, key: string): Promise<StateDelta> {
  const body = await store.get(key);
  if (!body) throw new Error(`Snapshot object ${key} is missing: the checkpoint that lists it cannot be restored`);
  return JSON.parse(body.toString('utf8')) as StateDelta;
}

/** `later`'s changes over `earlier`'s: one delta that starts where `earlier` started. */
export function followedBy(earlier: StateDelta, later: StateDelta): StateDelta {
  const changes = new Map(earlier.changes.map((change) => [JSON.stringify(change.key), change]));
  for (const change of later.changes) changes.set(JSON.stringify(change.key), change);
  return { ...earlier, changes: [...changes.values()] };
}

/** Part of a shard's state chain: an object's key, or a delta the shard record holds inline. */
export type StateSource = string | StateDelta;

/** The delta a source holds: an object is read from the store. */
export function stateDeltaOf(store: SnapshotStore, source: StateSource): Promise<StateDelta> {
  return typeof source === 'string' ? readStateDelta(store, source) : Promise.resolve(source);
}

/**
 * The chain's objects: each run of inline deltas is written as one object, its changes merged
 * (later ones winning, cleared keys kept), named by its first epoch. A checkpoint's manifest
 * lists only objects; the epochs within a run need no object of their own once a checkpoint
 * covers them, since only a rollback, before that, goes back to where one of them started.
 */
export async function storeStateSources(
  store: SnapshotStore,
  shard: ShardRef,
  sources: readonly StateSource[],
  maxParallelism: number,
): Promise<string[]> {
  const objects: string[] = [];
  for (let from = 0; from < sources.length; ) {
    const source = sources[from] as StateSource;
    if (typeof source === 'string') {
      objects.push(source);
      from++;
      continue;
    }
    let to = from;
    while (typeof sources[to] === 'object') to++;
    const run = sources.slice(from, to);
    const changes = [...(await mergeStateObjects(store, run, maxParallelism)).values()];
    objects.push(await putStateDelta(store, shard, stateDeltaBody({ epoch: source.epoch, offsetBefore: null, executorBefore: null, changes })));
    from = to;
  }
  return objects;
}

/**
 * The merge of state objects, later ones winning; a cleared key stays, as null, to hide older
 * values. Objects are read STATE_MERGE_FAN_IN at a time, side by side: a checkpoint's completion
 * waits for its merges, and S3 answers each read in tens of milliseconds.
 */
async function mergeStateObjects(store: SnapshotStore, objects: readonly StateSource[], maxParallelism: number): Promise<Map<string, StateChange>> {
  const merged = new Map<string, StateChange>();
  for (let from = 0; from < objects.length; from += STATE_MERGE_FAN_IN) {
    const deltas = await Promise.all(objects.slice(from, from + STATE_MERGE_FAN_IN).map((object) => stateDeltaOf(store, object)));
    for (const { changes } of deltas) {
      for (const change of changes) {
        const key = keyRef(change.key, maxParallelism);
        merged.set(key.serialized, { key, state: change.state });
      }
    }
  }
  return merged;
}

/** A shard's keyed state: the merge of its state objects, later ones winning, cleared keys dropped. */
export async function readShardState(
  store: SnapshotStore,
  objects: readonly StateSource[],
  maxParallelism: number,
): Promise<Map<string, { key: KeyRef; state: KeyState }>> {
  const state = new Map<string, { key: KeyRef; state: KeyState }>();
  for (const [serialized, { key, state: value }] of await mergeStateObjects(store, objects, maxParallelism)) {
    if (value !== null) state.set(serialized, { key, state: value });
  }
  return state;
}

/** An object's merge level, from its key: 0 for a delta, Infinity for a whole state (never merged). */
export function stateObjectLevel(key: string): number {
  const name = key.slice(key.lastIndexOf('/') + 1);
  if (name.startsWith('base-')) return Number.POSITIVE_INFINITY;
  return Number(/^level(\d+)-/.exec(name)?.[1] ?? 0);
}

/**
 * Whether a committed checkpoint's chain is still unmerged. The commit function merges it once
 * the checkpoint is committed (rewriting the manifest), so that a checkpoint's output waits for
 * no S3 reads; a checkpoint that builds on a chain it did not merge (the commit function failed,
 * or has not got to it) merges it itself.
 */
export function mergeOverdue(objects: readonly string[]): boolean {
  return objects.filter((key) => stateObjectLevel(key) === 0).length >= STATE_MERGE_FAN_IN;
}

/**
 * Merges the newest objects of a shard's chain, level by level from 0: when the trailing run
 * of objects at or below a level holds STATE_MERGE_FAN_IN objects of that level, the run
 * becomes one object of the next level. Older, larger objects stay as they are.
 */
export async function compactShardState(
  store: SnapshotStore,
  shard: ShardRef,
  objects: readonly string[],
  maxParallelism: number,
): Promise<string[]> {
  let chain = [...objects];
  const highest = () => Math.max(0, ...chain.map(stateObjectLevel).filter(Number.isFinite));
  for (let level = 0; level <= highest(); level++) {
    let start = chain.length;
    while (start > 0 && stateObjectLevel(chain[start - 1] ?? '') <= level) start--;
    const run = chain.slice(start);
    if (run.filter((key) => stateObjectLevel(key) === level).length < STATE_MERGE_FAN_IN) continue;
    // With nothing older, a cleared key hides nothing and is dropped.
    const changes = [...(await mergeStateObjects(store, run, maxParallelism)).values()].filter((change) => start > 0 || change.state !== null);
    const object = await writeStateDelta(store, shard, { epoch: null, offsetBefore: null, executorBefore: null, changes }, level + 1);
    chain = [...chain.slice(0, start), object];
  }
  return chain;
}

export async function writeManifest(store: SnapshotStore, key: string, manifest: CheckpointManifest): Promise<void> {
  await store.put(key, JSON.stringify(manifest));
}

export async function readManifest(store: SnapshotStore, key: string): Promise<CheckpointManifest | undefined> {
  const body = await store.get(key);
  if (!body) return undefined;
  const manifest = JSON.parse(body.toString('utf8')) as Omit<CheckpointManifest, 'format'> & { format: unknown };
  if (manifest.format !== 1) throw new Error(`${key} has format ${String(manifest.format)}; this Sluice reads format 1`);
  return { ...manifest, format: 1 };
}

/** The checkpoints that have a manifest, ascending. */
export async function listCheckpoints(store: SnapshotStore): Promise<number[]> {
  const keys = await store.list('checkpoints/');
  return keys.flatMap((key) => {
    const match = /^checkpoints\/(\d+)\/manifest\.json$/.exec(key);
    return match?.[1] ? [Number(match[1])] : [];
  });
}

/** Where a shard is: a partition of a stage's input topic. */
export interface ShardPosition {
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
}

/** The manifest of a checkpoint's predecessor: the base its state chains on. */
export async function baseManifest(snapshots: SnapshotStore, checkpoint: number): Promise<CheckpointManifest | undefined> {
  if (checkpoint <= 0) return undefined;
  const manifest = await readManifest(snapshots, checkpointManifestKey(checkpoint));
  if (!manifest) {
    throw new Error(
      `Checkpoint ${checkpoint} has no manifest in the snapshot store, so later checkpoints cannot build on it: was the ` +
        `pipeline run without a snapshot bucket? Restore a savepoint (sluice restore) or start the pipeline on a fresh table`,
    );
  }
  return manifest;
}

export function sameShard(entry: ShardPosition, target: ShardPosition): boolean {
  return entry.stageId === target.stageId && entry.topic === target.topic && entry.partition === target.partition;
}
