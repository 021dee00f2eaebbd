import { randomUUID } from 'node:crypto';
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

/** A shard's state objects are merged into one when a checkpoint would list more than this many. */
export const MAX_STATE_OBJECTS = 16;

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

export function savepointManifestKey(name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) {
    throw new Error(`"${name}" is not a valid savepoint name: use letters, digits, '.', '_' and '-'`);
  }
  return `savepoints/${name}/manifest.json`;
}

/** Writes the changes of `epoch` and returns the object's key (unique even if epochs restart). */
export async function writeStateDelta(
  store: SnapshotStore,
  shard: ShardRef,
  delta: Omit<StateDelta, 'changes'> & { readonly changes: readonly StateChange[] },
): Promise<string> {
  const key = `${shardPath(shard)}/${delta.epoch ?? 'base'}-${randomUUID()}.json`;
  const body: StateDelta = { ...delta, changes: delta.changes.map(({ key: k, state }) => ({ key: k.value, state })) };
  await store.put(key, JSON.stringify(body));
  return key;
}

export async function readStateDelta(store: SnapshotStore, key: string): Promise<StateDelta> {
  const body = await store.get(key);
  if (!body) throw new Error(`Snapshot object ${key} is missing: the checkpoint that lists it cannot be restored`);
  return JSON.parse(body.toString('utf8')) as StateDelta;
}

/** A shard's keyed state: the merge of its state objects, later ones winning, cleared keys dropped. */
export async function readShardState(
  store: SnapshotStore,
  objects: readonly string[],
  maxParallelism: number,
): Promise<Map<string, { key: KeyRef; state: KeyState }>> {
  const state = new Map<string, { key: KeyRef; state: KeyState }>();
  for (const object of objects) {
    for (const change of (await readStateDelta(store, object)).changes) {
      const key = keyRef(change.key, maxParallelism);
      if (change.state === null) state.delete(key.serialized);
      else state.set(key.serialized, { key, state: change.state });
    }
  }
  return state;
}

/** Replaces a long chain of state objects with one holding their merge. */
export async function compactShardState(
  store: SnapshotStore,
  shard: ShardRef,
  objects: readonly string[],
  maxParallelism: number,
): Promise<string[]> {
  if (objects.length <= MAX_STATE_OBJECTS) return [...objects];
  const merged = await readShardState(store, objects, maxParallelism);
  const changes = [...merged.values()].map(({ key, state }) => ({ key, state }));
  return [await writeStateDelta(store, shard, { epoch: null, offsetBefore: null, executorBefore: null, changes })];
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
