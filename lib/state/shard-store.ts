import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { KeyRef } from './keys.js';
import { invariant } from '../invariants.js';
import {
  ancestorOf,
  bucketOf,
  bucketPack,
  bucketPackText,
  grownLayout,
  DENSE_PACK_LIVE_BYTES,
  INITIAL_LAYOUT,
  liveBytesOf,
  MAX_CHUNK_BYTES,
  MAX_PACK_BYTES,
  PACK_LIVE_BYTES,
  packHash,
  SPILL_STATE_BYTES,
  spillPack,
  spillPackText,
  writeUnits,
  type PackId,
  type PackLayout,
  type PackOptions,
  type StoredPack,
} from './packs.js';

/**
 * Durable progress and keyed state of shards — the heart of Sluice's exactly-once
 * (DESIGN.md, invariants 2 and 3). One shard is one partition of one stage's input.
 *
 * - **Claim.** An invocation claims a shard before it writes anything: the claim raises the
 *   shard's epoch (its fencing token) and, if the previous owner never committed, records
 *   that owner's epoch as aborted.
 * - **Write.** The invocation writes the new value of every key it changed, tagged with its
 *   epoch. Each key's entry keeps its newest value (`cur`) and the last committed value before
 *   it (`prev`). Entries live in packs (lib/state/packs.ts), one DynamoDB item per hash
 *   bucket; a write only replaces a pack in the version it has seen, and never a pack a newer
 *   epoch wrote, so a zombie (an older epoch still running) can never overwrite a newer
 *   epoch's value.
 * - **Commit.** One conditional update of the shard's record, on condition that the epoch is
 *   still the invocation's, makes everything durable at once: it records the epoch as
 *   committed together with the shard's progress (offset, watermark, transaction, ...).
 *
 * A value tagged with epoch `e` is visible iff `e` committed: `e <= committedEpoch` and `e`
 * is not among the aborted epochs. A reader takes `cur` if visible, else `prev` if visible,
 * else nothing. Writes of an attempt that crashed, or of a zombie, are therefore never
 * visible — including for keys that nobody writes again — and any number of keys commit
 * atomically, without transactions.
 */

/** The state of one key: every state of every operator of the stage, by state id. */
export type KeyState = Readonly<Record<string, unknown>>;

export interface ShardRef {
  readonly stage: string;
  readonly shard: number;
}

/** An inclusive range of epochs `[from, to]` that never committed. */
export type EpochRange = readonly [number, number];

export interface ShardClaim {
  readonly shard: ShardRef;
  /** This invocation's fencing token. */
  readonly epoch: number;
  readonly committedEpoch: number;
  readonly abortedEpochs: readonly EpochRange[];
  /** What the last commit recorded; undefined for a shard that never committed. */
  readonly progress: unknown;
  /** Where the committed state's keys live. */
  readonly layout: PackLayout;
}

export interface StateChange {
  readonly key: KeyRef;
  /** The key's state after the batch; null when every state of the key was cleared. */
  readonly state: KeyState | null;
  /**
   * The state's JSON text, when whoever made the change has it: the size check and the write
   * then read it instead of stringifying a state of megabytes again each.
   */
  readonly json?: string;
}

/**
 * The most state one key may hold, as its items store it (deflated JSON). A state over one
 * item's share is cut into chunks, an item each, and every write of the key writes them all:
 * a batch that changes such a key pays a write unit per kilobyte of it, and the function holds
 * its JSON, about five times this, in memory.
 */
export const MAX_KEY_STATE_BYTES = 8 * 1024 * 1024;

/** The first change whose state is more than a key may hold, with its deflated size. */
export function oversizedKeyState(changes: readonly StateChange[]): { key: KeyRef; bytes: number } | undefined {
  for (const change of changes) {
    const stored = storedState(change);
    const bytes = stored && oversizedBytes(stored);
    if (bytes !== undefined) return { key: change.key, bytes };
  }
  return undefined;
}

/** A change's state as packs store it: its JSON, that JSON's size (as packs count their live bytes), and the change. */
interface StoredStateText {
  readonly change: StateChange;
  readonly json: string;
  readonly bytes: number;
}

/** A change's state as JSON; undefined for cleared state. */
function storedState(change: StateChange): StoredStateText | undefined {
  if (change.state === null) return undefined;
  const json = change.json ?? JSON.stringify(change.state);
  return { change, json, bytes: Buffer.byteLength(json) };
}

/**
 * A change's state deflated, measured once: the size check before a batch writes, the same
 * check in the write, and the cutting of a spilled state into chunks each need it, and a state
 * large enough to need it takes milliseconds per megabyte to deflate.
 */
const deflatedSizes = new WeakMap<StateChange, number>();

function deflatedBytes({ change, json }: StoredStateText): number {
  let bytes = deflatedSizes.get(change);
  if (bytes === undefined) {
    bytes = deflateJson(json).length;
    deflatedSizes.set(change, bytes);
  }
  return bytes;
}

/**
 * The deflated size of a state that is more than a key may hold; undefined within the limit. A
 * state whose JSON is within the limit is within it deflated too (but for deflate's few bytes of
 * framing, which the item's margin holds), so only a larger one is deflated to measure it.
 */
function oversizedBytes(stored: StoredStateText): number | undefined {
  if (stored.bytes <= MAX_KEY_STATE_BYTES) return undefined;
  const bytes = deflatedBytes(stored);
  return bytes > MAX_KEY_STATE_BYTES ? bytes : undefined;
}

/** A key's state outgrew what its item can hold: the batch fails before it writes anything, naming the key. */
export class KeyStateTooLargeError extends Error {
  override readonly name = 'KeyStateTooLargeError';

  constructor(
    readonly shard: ShardRef,
    readonly key: KeyRef,
    readonly bytes: number,
  ) {
    const shown = key.serialized.length > 200 ? `${key.serialized.slice(0, 200)}…` : key.serialized;
    super(
      `Shard ${shard.stage}/${shard.shard}: the state of key ${shown} would take ${bytes} bytes deflated, more than the ` +
        `${MAX_KEY_STATE_BYTES} a key may hold (every batch that changes the key writes all of it). Keep less per key: ` +
        `aggregate (reduce or aggregate instead of process over all elements), set a StateTtlConfig, or shorten the windows.`,
    );
  }
}

/** The most a shard's progress may take as its record stores it (deflated JSON): the record is one DynamoDB item, within 400 KB. */
export const MAX_PROGRESS_BYTES = 380 * 1024;

/**
 * JSON as a record stores its progress and a pack its entries: deflated. Every claim and commit
 * rewrites the whole record, a write unit per started kilobyte, and the progress repeats itself
 * (each timer names its key, the position repeats the executor), as a pack's entries repeat
 * their states' field names: about five times smaller, for some 50 µs of CPU a write.
 */
export function deflateJson(json: string): Buffer {
  return deflateRawSync(json);
}

/** A record's progress as JSON, and deflated as it is stored: a claim over this store's own commit writes the commit's bytes again. */
interface EncodedProgress {
  readonly json: string;
  readonly deflated: Buffer;
}

function encodeProgress(json: string | undefined): EncodedProgress | undefined {
  return json === undefined ? undefined : { json, deflated: deflateJson(json) };
}

/** What a record or a pack stores: deflated JSON, or JSON text as versions before compression wrote it. */
export function parseStored(stored: Uint8Array | string): unknown {
  return JSON.parse(typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8')) as unknown;
}

/**
 * A shard's progress outgrew its record's item. The stage executor's timers are in it, so a stage
 * whose keys hold many event-time timers at once (a session window open per key) reaches it.
 */
export class ShardProgressTooLargeError extends Error {
  override readonly name = 'ShardProgressTooLargeError';

  constructor(
    readonly shard: ShardRef,
    readonly bytes: number,
  ) {
    super(
      `Shard ${shard.stage}/${shard.shard}: its progress would take ${bytes} bytes deflated, more than the ${MAX_PROGRESS_BYTES} its ` +
        `record may hold (one DynamoDB item, within 400 KB). The progress keeps the stage's timers: too many keys hold a ` +
        `timer at once, such as a session window open per key. Spread the keys over more partitions (each is a shard), ` +
        `or shorten the windows' gap; Sluice does not keep timers with keyed state yet.`,
    );
  }
}

/** Another invocation claimed the shard: this one must stop and write nothing more. */
export class ShardFencedError extends Error {
  override readonly name = 'ShardFencedError';

  constructor(
    readonly shard: ShardRef,
    readonly epoch: number,
  ) {
    super(`Shard ${shard.stage}/${shard.shard}: epoch ${epoch} was fenced by a newer invocation; its writes are discarded`);
  }
}

/**
 * The shard's record was written by a Sluice before key packs, which kept each key in an item
 * of its own: this version does not read those items, so a claim would go on without the
 * shard's state.
 */
export class StateWrittenBeforeKeyPacksError extends Error {
  override readonly name = 'StateWrittenBeforeKeyPacksError';

  constructor(readonly shard: ShardRef) {
    super(
      `Shard ${shard.stage}/${shard.shard}: its state table was written by a Sluice version before key packs, whose per-key ` +
        `items this version does not read. Move the pipeline over with a savepoint: redeploy the version that wrote it, stop its ` +
        `triggers, run \`sluice savepoint\`, deploy this version, and run \`sluice restore --savepoint <name>\` (README, "Deploying to AWS")`,
    );
  }
}

/** How a claim may treat the record it claims over. */
export interface ClaimOptions {
  /**
   * A restore, which deletes the shard's state and writes it anew: it may claim over a record
   * written before key packs, and its writes start from an empty layout, whose live bytes count
   * only what it writes (the record keeps its layout until the restore commits).
   */
  readonly replacingState?: boolean;
}

export interface ShardStore {
  /**
   * Claims the shard. `expectedKeys` are keys the caller will read under the claim: a store may
   * read them beside the claim, where that reads what a read after it would. Throws
   * {@link StateWrittenBeforeKeyPacksError} over a record an older version wrote, unless
   * `options.replacingState`.
   */
  claim(shard: ShardRef, expectedKeys?: readonly KeyRef[], options?: ClaimOptions): Promise<ShardClaim>;
  /** The visible state of each key, as of the claim; keys without state are absent. */
  read(claim: ShardClaim, keys: readonly KeyRef[]): Promise<Map<string, KeyState>>;
  /** Writes the changed keys under the claim's epoch; invisible until `commit`. */
  write(claim: ShardClaim, changes: readonly StateChange[]): Promise<void>;
  /**
   * Makes the claim's writes visible and records `progress`, atomically. Once per claim; a
   * repeat of a commit that landed (the retry of an ambiguous failure) returns without writing,
   * even once a newer claim has come: what it committed stays committed.
   */
  commit(claim: ShardClaim, progress: unknown): Promise<void>;
  /** The shard's record as it stands, without claiming: for the coordinator and the commit function. */
  peek(shard: ShardRef): Promise<ShardRecord | undefined>;
  /**
   * Deletes every pack and spilled key's item of every shard (shard records stay, so epochs keep rising): for a
   * restore, which then writes the restored keys under fresh claims. Returns how many it deleted.
   */
  deleteKeyedState(): Promise<number>;
}

/**
 * Marks a spilled key's state in its pack: the state is in the key's own item. A marker of 2 or
 * more says the state is cut into that many chunks, an item each, whose values are slices of
 * its JSON.
 */
export const SPILLED = 0;

/** What an entry holds: a key's state or null for cleared state; in a pack, a spill marker; in a later chunk's item, a slice of the state's JSON. */
export type StoredState = KeyState | null | number | string;

/** One key's entry: the newest value and the last committed value before it. */
export interface KeyItem {
  readonly cur: StoredState;
  readonly curEpoch: number;
  readonly prev: StoredState;
  readonly prevEpoch: number;
}

export function isCommitted(claim: Pick<ShardClaim, 'committedEpoch' | 'abortedEpochs'>, epoch: number): boolean {
  return epoch <= claim.committedEpoch && !claim.abortedEpochs.some(([from, to]) => epoch >= from && epoch <= to);
}

/** The value a reader with this claim sees in an entry: undefined when no committed value exists. */
export function visibleState(claim: Pick<ShardClaim, 'committedEpoch' | 'abortedEpochs'>, item: KeyItem | undefined): StoredState | undefined {
  if (!item) return undefined;
  if (isCommitted(claim, item.curEpoch)) return item.cur;
  if (item.prevEpoch >= 0 && isCommitted(claim, item.prevEpoch)) return item.prev;
  return undefined;
}

/** The epoch of the value a reader with this claim sees in an entry (see {@link visibleState}). */
function visibleEpoch(claim: Pick<ShardClaim, 'committedEpoch' | 'abortedEpochs'>, item: KeyItem | undefined): number | undefined {
  if (!item) return undefined;
  if (isCommitted(claim, item.curEpoch)) return item.curEpoch;
  if (item.prevEpoch >= 0 && isCommitted(claim, item.prevEpoch)) return item.prevEpoch;
  return undefined;
}

/**
 * The JSON of a spilled state cut into chunks whose slices each store within `chunkBytes`
 * deflated; one chunk for a state that does. `deflatedBytes`: the whole JSON's, deflated.
 */
export function chunksOf(json: string, deflatedBytes: number, chunkBytes: number): string[] {
  if (deflatedBytes <= chunkBytes) return [json];
  const chunks: string[] = [];
  // A first guess by the whole's ratio, with a margin; a slice that deflates less well is cut shorter.
  const guess = Math.max(1, Math.floor(((json.length * chunkBytes) / deflatedBytes) * 0.9));
  for (let from = 0; from < json.length; ) {
    let length = Math.min(guess, json.length - from);
    for (;;) {
      const bytes = deflateJson(JSON.stringify(json.slice(from, from + length))).length;
      if (bytes <= chunkBytes || length === 1) break;
      length = Math.max(1, Math.floor(length * Math.min(0.8, chunkBytes / bytes)));
    }
    chunks.push(json.slice(from, from + length));
    from += length;
  }
  return chunks;
}

/**
 * A spilled key's state from its own items: `itemOf(chunk)` gives the key's entry in each of
 * the `marker`'s chunks. Each shows as visible the value the epoch that wrote the marker wrote,
 * since that epoch wrote every chunk and only epochs a reader cannot see wrote them since.
 */
function spilledState(
  reader: Pick<ShardClaim, 'committedEpoch' | 'abortedEpochs'>,
  key: string,
  marker: number,
  markerEpoch: number | undefined,
  itemOf: (chunk: number) => KeyItem | undefined,
): KeyState | null {
  const chunks = Array.from({ length: Math.max(1, marker) }, (_, chunk) => {
    const item = itemOf(chunk);
    const epoch = visibleEpoch(reader, item);
    invariant(epoch === markerEpoch, () => `spilled key ${key}: its chunk ${chunk} shows epoch ${epoch}'s value where its marker is epoch ${markerEpoch}'s`);
    return visibleState(reader, item);
  });
  if (marker === SPILLED) return chunks[0] as KeyState | null;
  return JSON.parse((chunks as string[]).join('')) as KeyState;
}

/** The entry an epoch writes over `existing`: `prev` keeps the last committed value. */
export function nextItem(claim: ShardClaim, existing: KeyItem | undefined, state: StoredState): KeyItem {
  const visible = visibleState(claim, existing);
  if (!existing || visible === undefined) return { cur: state, curEpoch: claim.epoch, prev: null, prevEpoch: -1 };
  const prevEpoch = isCommitted(claim, existing.curEpoch) ? existing.curEpoch : existing.prevEpoch;
  return { cur: state, curEpoch: claim.epoch, prev: visible, prevEpoch };
}

/**
 * An entry of an older epoch as a rewrite of its pack keeps it: its committed value alone, or
 * nothing for cleared or never-committed state. Every epoch older than the claim is committed
 * or aborted for good, so the value it drops is one no reader can see.
 */
function settled(claim: ShardClaim, item: KeyItem): KeyItem | undefined {
  const epoch = isCommitted(claim, item.curEpoch) ? item.curEpoch : item.prevEpoch;
  const value = epoch === item.curEpoch ? item.cur : item.prev;
  if (epoch < 0 || value === null || !isCommitted(claim, epoch)) return undefined;
  return { cur: value, curEpoch: epoch, prev: null, prevEpoch: -1 };
}

/** Adds `epoch` to the aborted ranges, merging it with an adjacent range. */
export function withAborted(ranges: readonly EpochRange[], epoch: number): EpochRange[] {
  const result = ranges.map(([from, to]) => [from, to] as [number, number]);
  const last = result.at(-1);
  if (last && last[1] === epoch - 1) last[1] = epoch;
  else result.push([epoch, epoch]);
  return result;
}

/** The record of a shard: its owner's epoch, the last committed epoch and what it recorded. */
export interface ShardRecord {
  readonly epoch: number;
  readonly committedEpoch: number;
  readonly abortedEpochs: readonly EpochRange[];
  readonly progress: unknown;
  readonly layout: PackLayout;
  /** Written by a Sluice before key packs: the record has no layout, and the keys are in items of their own. */
  readonly writtenBeforeKeyPacks?: boolean;
}

/**
 * When a record write may land: a claim needs the record exactly as it read it — epoch and
 * committed epoch, since a commit changes only the latter — and a commit needs its epoch to
 * be the newest and not yet committed.
 */
export type RecordCondition =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unchanged'; readonly epoch: number; readonly committedEpoch: number }
  | { readonly kind: 'uncommitted'; readonly epoch: number };

/** Whether `current` meets `condition` (the in-memory twin's version of DynamoDB's condition expression). */
export function meetsCondition(current: ShardRecord | undefined, condition: RecordCondition): boolean {
  switch (condition.kind) {
    case 'absent':
      return current === undefined;
    case 'unchanged':
      return current?.epoch === condition.epoch && current.committedEpoch === condition.committedEpoch;
    case 'uncommitted':
      return current?.epoch === condition.epoch && current.committedEpoch < condition.epoch;
  }
}

/**
 * When a pack write may land: over the version the writer read (undefined: none), written by
 * no newer epoch; or, for a bucket no committed layout has, over anything an older epoch wrote
 * — only aborted epochs can have written it.
 */
export type PackCondition =
  | { readonly kind: 'version'; readonly version: number | undefined; readonly epoch: number }
  | { readonly kind: 'older'; readonly epoch: number };

/** Whether `current` meets `condition` (the in-memory twin's version of DynamoDB's condition expression). */
export function meetsPackCondition(current: StoredPack | undefined, condition: PackCondition): boolean {
  if (condition.kind === 'older') return current === undefined || current.epoch < condition.epoch;
  if (condition.version === undefined) return current === undefined;
  return current?.version === condition.version && current.epoch <= condition.epoch;
}

/** Requests a store made, for the cost metrics (DynamoDB requests are the bill). */
export interface StoreRequestCounts {
  recordReads: number;
  recordWrites: number;
  itemReadRequests: number;
  itemsRead: number;
  itemWrites: number;
  /** DynamoDB write units of every record and pack write, from the size of what it wrote. */
  writeUnits: number;
}

const MAX_WRITE_ATTEMPTS = 5;
/** Bytes of a record's or pack's keys and attribute names, beyond its JSON. */
const ITEM_OVERHEAD_BYTES = 100;

function shardId({ stage, shard }: ShardRef): string {
  return `${stage}/${shard}`;
}

/** A pack as a batch works with it: its entries by key. */
interface Pack {
  readonly version: number;
  readonly epoch: number;
  readonly entries: ReadonlyMap<string, KeyItem>;
}

type StoredEntry = [StoredState, number] | [StoredState, number, StoredState, number];

function parsePack(stored: StoredPack | undefined): Pack | undefined {
  if (!stored) return undefined;
  const entries = new Map<string, KeyItem>();
  for (const [key, [cur, curEpoch, prev = null, prevEpoch = -1]] of Object.entries(parseStored(stored.entries) as Record<string, StoredEntry>)) {
    entries.set(key, { cur, curEpoch, prev, prevEpoch });
  }
  return { version: stored.version, epoch: stored.epoch, entries };
}

function entriesJson(entries: ReadonlyMap<string, KeyItem>): string {
  const parts: string[] = [];
  for (const [key, { cur, curEpoch, prev, prevEpoch }] of entries) {
    const entry: StoredEntry = prevEpoch < 0 ? [cur, curEpoch] : [cur, curEpoch, prev, prevEpoch];
    parts.push(`${JSON.stringify(key)}:${JSON.stringify(entry)}`);
  }
  return `{${parts.join(',')}}`;
}

/** The items of a spilled key's state under its `marker`. */
function chunkIds(key: KeyRef, marker: number): PackId[] {
  return Array.from({ length: Math.max(1, marker) }, (_, chunk) => spillPack(key, chunk));
}

/** The marker of a spilled state cut into `chunks`. */
function spillMarker(chunks: readonly string[]): number {
  return chunks.length === 1 ? SPILLED : chunks.length;
}

function homeOf(key: KeyRef, layout: PackLayout): PackId {
  return bucketPack(bucketOf(packHash(key.serialized), layout.buckets));
}

function distinct(ids: readonly PackId[]): PackId[] {
  return [...new Map(ids.map((id) => [id.text, id])).values()];
}

/**
 * The protocol over a few storage primitives, so that the DynamoDB store and its in-memory
 * twin differ only in how they store items — and pass the same contract tests.
 */
export abstract class ItemShardStore implements ShardStore {
  /** The record this store's latest commit of each shard wrote, for the next claim (see {@link claim}). */
  private readonly lastCommitted = new Map<string, { readonly record: ShardRecord; readonly progress: EncodedProgress | undefined }>();
  /** Packs read (undefined: absent) or written under each claim, so that a write is conditional on what its batch saw. */
  private readonly seen = new WeakMap<ShardClaim, Map<string, Pack | undefined>>();
  /** Packs read beside a claim (see {@link claim}), for its first read. */
  private readonly readBeside = new WeakMap<ShardClaim, { readonly ids: readonly PackId[]; readonly packs: Promise<Map<string, StoredPack>> }>();
  /** The layout a claim's writes grew the shard to, for its commit to record. */
  private readonly grown = new WeakMap<ShardClaim, PackLayout>();
  readonly requests: StoreRequestCounts = { recordReads: 0, recordWrites: 0, itemReadRequests: 0, itemsRead: 0, itemWrites: 0, writeUnits: 0 };
  private readonly liveBytesPerPack: number;
  private readonly denseLiveBytesPerPack: number;
  private readonly spillStateBytes: number;
  private readonly chunkBytes: number;

  constructor({ liveBytesPerPack = PACK_LIVE_BYTES, denseLiveBytesPerPack, spillStateBytes = SPILL_STATE_BYTES, chunkBytes = MAX_CHUNK_BYTES }: PackOptions = {}) {
    this.liveBytesPerPack = liveBytesPerPack;
    this.denseLiveBytesPerPack = denseLiveBytesPerPack ?? (liveBytesPerPack * DENSE_PACK_LIVE_BYTES) / PACK_LIVE_BYTES;
    this.spillStateBytes = spillStateBytes;
    this.chunkBytes = chunkBytes;
  }

  protected abstract getRecord(shard: ShardRef): Promise<ShardRecord | undefined>;
  /** Replaces the record if it meets `condition`; `storedProgress` is its progress as a store that keeps bytes keeps it. */
  protected abstract putRecordIf(shard: ShardRef, record: ShardRecord, condition: RecordCondition, storedProgress: Buffer | undefined): Promise<boolean>;
  /** The stored packs among `ids`, by id text. */
  protected abstract getPacks(shard: ShardRef, ids: readonly PackId[]): Promise<Map<string, StoredPack>>;
  /** Writes the pack if the stored one meets `condition`. */
  protected abstract putPackIf(shard: ShardRef, id: PackId, pack: StoredPack, condition: PackCondition): Promise<boolean>;
  protected abstract writeConcurrency(): number;
  abstract deleteKeyedState(): Promise<number>;

  /**
   * Claims the shard: a new epoch over the record as it is. A store whose own commit wrote the
   * record last claims over that copy without reading it first, and falls back to reading when
   * the conditional write finds the record changed: every write of a record moves its epoch or
   * its committed epoch, so the condition cannot hold over anything but that very record.
   *
   * That claim also reads the packs of `expectedKeys` beside its write. If it holds, no one
   * claimed the shard since this store's commit, so every pack written since came from an
   * epoch the claim sees as aborted, conditional on the pack it read: what the packs show as
   * committed is what they show once the claim lands, and a write over a pack changed
   * meanwhile fails its condition and reads it again, as it would after any read.
   */
  async claim(shard: ShardRef, expectedKeys: readonly KeyRef[] = [], options: ClaimOptions = {}): Promise<ShardClaim> {
    const id = shardId(shard);
    const committed = this.lastCommitted.get(id);
    this.lastCommitted.delete(id);
    if (committed) {
      const ids = distinct(expectedKeys.map((key) => homeOf(key, committed.record.layout)));
      const packs = ids.length > 0 ? this.getPacks(shard, ids) : undefined;
      packs?.catch(() => undefined);
      const progress = committed.progress === undefined ? undefined : (JSON.parse(committed.progress.json) as unknown);
      const claim = await this.claimOver(shard, { ...committed.record, progress }, committed.progress, options);
      if (claim) {
        if (packs) this.readBeside.set(claim, { ids, packs });
        return claim;
      }
    }
    for (;;) {
      const record = await this.getRecord(shard);
      if (record?.writtenBeforeKeyPacks && !options.replacingState) throw new StateWrittenBeforeKeyPacksError(shard);
      const claim = await this.claimOver(shard, record, encodeProgress(JSON.stringify(record?.progress)), options);
      if (claim) return claim;
    }
  }

  /**
   * A claim over `record` as read (or as last committed here); undefined if the record is no
   * longer that. `progress`: its progress as JSON and as stored.
   */
  private async claimOver(
    shard: ShardRef,
    record: ShardRecord | undefined,
    progress: EncodedProgress | undefined,
    options: ClaimOptions,
  ): Promise<ShardClaim | undefined> {
    const previousEpoch = record?.epoch ?? 0;
    const committedEpoch = record?.committedEpoch ?? 0;
    const abortedEpochs =
      record && previousEpoch > committedEpoch ? withAborted(record.abortedEpochs, previousEpoch) : (record?.abortedEpochs ?? []);
    const layout = record?.layout ?? INITIAL_LAYOUT;
    const next: ShardRecord = { epoch: previousEpoch + 1, committedEpoch, abortedEpochs, progress: record?.progress, layout };
    const condition: RecordCondition = record
      ? { kind: 'unchanged', epoch: record.epoch, committedEpoch: record.committedEpoch }
      : { kind: 'absent' };
    if (!(await this.putRecord(shard, next, condition, progress))) return undefined;
    return { shard, epoch: next.epoch, committedEpoch, abortedEpochs, progress: next.progress, layout: options.replacingState ? INITIAL_LAYOUT : layout };
  }

  /** Writes the record with its progress as each caller has it encoded, and counts its units. */
  private putRecord(shard: ShardRef, record: ShardRecord, condition: RecordCondition, progress: EncodedProgress | undefined): Promise<boolean> {
    const bytes = progress?.deflated.length ?? 0;
    if (bytes > MAX_PROGRESS_BYTES) return Promise.reject(new ShardProgressTooLargeError(shard, bytes));
    this.requests.writeUnits += writeUnits(bytes + JSON.stringify(record.abortedEpochs).length + ITEM_OVERHEAD_BYTES);
    return this.putRecordIf(shard, record, condition, progress?.deflated);
  }

  async read(claim: ShardClaim, keys: readonly KeyRef[]): Promise<Map<string, KeyState>> {
    const homes = keys.map((key) => homeOf(key, claim.layout));
    await this.ensureSeen(claim, homes);
    const seen = this.seenBy(claim);
    const result = new Map<string, KeyState>();
    const spilled: { key: KeyRef; marker: number; epoch: number | undefined }[] = [];
    homes.forEach((home, i) => {
      const key = keys[i] as KeyRef;
      const entry = seen.get(home.text)?.entries.get(key.serialized);
      const state = visibleState(claim, entry);
      if (typeof state === 'number') spilled.push({ key, marker: state, epoch: visibleEpoch(claim, entry) });
      // A copy: callers change state in place, and `seen` must keep what was read, from which
      // the write computes the entry's `prev`.
      else if (state) result.set(key.serialized, structuredClone(state as KeyState));
    });
    if (spilled.length > 0) {
      await this.ensureSeen(claim, spilled.flatMap(({ key, marker }) => chunkIds(key, marker)));
      for (const { key, marker, epoch } of spilled) {
        const chunks = chunkIds(key, marker).map((id) => seen.get(id.text));
        // A newer owner rewrote the key's items: this claim can no longer read its state.
        if (chunks.some((chunk) => chunk && chunk.epoch > claim.epoch)) throw new ShardFencedError(claim.shard, claim.epoch);
        const state = spilledState(claim, key.serialized, marker, epoch, (chunk) => chunks[chunk]?.entries.get(key.serialized));
        if (state) result.set(key.serialized, marker === SPILLED ? structuredClone(state) : state);
      }
    }
    return result;
  }

  /** Reads the packs among `ids` this claim has not seen: from the read beside the claim if it succeeded, the rest now. */
  private async ensureSeen(claim: ShardClaim, ids: readonly PackId[]): Promise<void> {
    const seen = this.seenBy(claim);
    const beside = this.readBeside.get(claim);
    this.readBeside.delete(claim);
    const early = await beside?.packs.catch(() => undefined);
    if (beside && early) for (const id of beside.ids) if (!seen.has(id.text)) seen.set(id.text, parsePack(early.get(id.text)));
    const missing = distinct(ids.filter((id) => !seen.has(id.text)));
    if (missing.length === 0) return;
    const stored = await this.getPacks(claim.shard, missing);
    for (const id of missing) seen.set(id.text, parsePack(stored.get(id.text)));
  }

  /**
   * Writes the changed keys' entries into their packs, each pack once. A batch whose live bytes
   * outgrow the layout splits buckets: a new bucket's pack takes over its keys' entries from
   * the pack they lived in, which keeps them until a commit of the grown layout makes them
   * garbage, so that the shard reads right whether or not this epoch commits.
   */
  async write(claim: ShardClaim, changes: readonly StateChange[]): Promise<void> {
    const writes = changes.map((change) => {
      const { key, state } = change;
      // One JSON text per state: its size decides the pack, and a spilled state's chunks are cut from it.
      const stored = storedState(change);
      const oversized = stored && oversizedBytes(stored);
      if (oversized !== undefined) throw new KeyStateTooLargeError(claim.shard, key, oversized);
      const hash = packHash(key.serialized);
      // Its pack under the committed layout: where its committed entry is, whichever pack it goes to now.
      const home = bucketPack(bucketOf(hash, claim.layout.buckets));
      const spilled = stored !== undefined && stored.bytes > this.spillStateBytes;
      return { key, state, bytes: stored?.bytes, hash, home, spilled, chunks: spilled ? this.spillChunksOf(stored) : [] };
    });
    const seen = this.seenBy(claim);
    const committed = claim.layout;
    const before = this.grown.get(claim) ?? committed;
    const spills = writes.filter(({ spilled }) => spilled);
    await this.ensureSeen(claim, [...writes.map(({ home }) => home), ...spills.flatMap(({ key, chunks }) => chunkIds(key, chunks.length))]);
    const existing = ({ key, home }: (typeof writes)[number]) => seen.get(home.text)?.entries.get(key.serialized);

    let delta = 0;
    let changedBytes = 0;
    for (const write of writes) {
      const old = visibleState(claim, existing(write));
      const oldBytes = old === undefined || old === null ? undefined : typeof old === 'number' ? 0 : Buffer.byteLength(JSON.stringify(old));
      const [live, wasLive] = [liveBytesOf(write.key, write.bytes, write.spilled), liveBytesOf(write.key, oldBytes, typeof old === 'number')];
      delta += live - wasLive;
      changedBytes += Math.max(live, wasLive);
    }
    const after = grownLayout(before, { delta, changedBytes, changedKeys: writes.length }, this.liveBytesPerPack, this.denseLiveBytesPerPack);
    const split = Array.from({ length: after.buckets - before.buckets }, (_, i) => before.buckets + i);
    await this.ensureSeen(claim, split.map((bucket) => bucketPack(ancestorOf(bucket, before.buckets))));

    const byBucket = new Map<number, (typeof writes)[number][]>(split.map((bucket) => [bucket, []]));
    for (const write of writes) {
      const bucket = bucketOf(write.hash, after.buckets);
      const inBucket = byBucket.get(bucket);
      if (inBucket) inBucket.push(write);
      else byBucket.set(bucket, [write]);
    }
    const entriesOf = (bucket: number, inBucket: readonly (typeof writes)[number][]): Map<string, KeyItem> => {
      const entries = new Map<string, KeyItem>();
      const fresh = bucket >= before.buckets;
      const source = fresh ? ancestorOf(bucket, before.buckets) : bucket;
      for (const [key, item] of seen.get(bucketPackText(source))?.entries ?? []) {
        const hash = packHash(key);
        const belongs = fresh
          ? bucketOf(hash, before.buckets) === source && bucketOf(hash, after.buckets) === bucket
          : bucketOf(hash, committed.buckets) === bucket || bucketOf(hash, after.buckets) === bucket;
        const kept = belongs && (item.curEpoch < claim.epoch ? settled(claim, item) : item);
        if (kept) entries.set(key, kept);
      }
      for (const write of inBucket) entries.set(write.key.serialized, nextItem(claim, existing(write), write.spilled ? spillMarker(write.chunks) : write.state));
      return entries;
    };
    const packWrites = [...byBucket].map(([bucket, inBucket]) => () =>
      this.writePack(claim, bucketPack(bucket), () => entriesOf(bucket, inBucket), bucket >= before.buckets),
    );
    for (const { key, state, chunks } of spills) {
      // One chunk keeps the state itself, as before states were cut.
      const values: StoredState[] = chunks.length === 1 ? [state] : chunks;
      values.forEach((value, chunk) => {
        const id = spillPack(key, chunk);
        packWrites.push(() => this.writePack(claim, id, () => new Map([[key.serialized, nextItem(claim, seen.get(id.text)?.entries.get(key.serialized), value)]]), false));
      });
    }
    const queue = packWrites.values();
    const worker = async () => {
      for (const packWrite of queue) await packWrite();
    };
    await Promise.all(Array.from({ length: Math.min(this.writeConcurrency(), packWrites.length) }, worker));
    this.grown.set(claim, after);
  }

  /** A spilled state's JSON in the chunks its items store; one chunk for a state whose JSON fits one item (then its deflated size does too). */
  private spillChunksOf(stored: StoredStateText): string[] {
    return stored.bytes <= this.chunkBytes ? [stored.json] : chunksOf(stored.json, deflatedBytes(stored), this.chunkBytes);
  }

  /**
   * Writes a pack with the entries `entriesOf` builds from what the claim has seen, over the
   * version it saw: when someone wrote the pack since, reads it again and builds again.
   * `fresh`: a bucket no committed layout has, written over whatever aborted epochs left in it.
   */
  private async writePack(claim: ShardClaim, id: PackId, entriesOf: () => Map<string, KeyItem>, fresh: boolean): Promise<void> {
    const seen = this.seenBy(claim);
    for (let attempt = 1; ; attempt++) {
      const existing = seen.get(id.text);
      if (existing && existing.epoch > claim.epoch) throw new ShardFencedError(claim.shard, claim.epoch);
      const entries = entriesOf();
      const stored = deflateJson(entriesJson(entries));
      if (stored.length > MAX_PACK_BYTES) {
        throw new Error(`Shard ${claim.shard.stage}/${claim.shard.shard}: pack ${id.text} would take ${stored.length} bytes deflated, more than the ${MAX_PACK_BYTES} a pack may hold`);
      }
      const overwrite = fresh && !seen.has(id.text);
      const condition: PackCondition = overwrite ? { kind: 'older', epoch: claim.epoch } : { kind: 'version', version: existing?.version, epoch: claim.epoch };
      const version = (existing?.version ?? 0) + 1;
      this.requests.writeUnits += writeUnits(stored.length + ITEM_OVERHEAD_BYTES);
      if (await this.putPackIf(claim.shard, id, { version, epoch: claim.epoch, entries: stored }, condition)) {
        seen.set(id.text, { version, epoch: claim.epoch, entries });
        return;
      }
      // Someone wrote the pack since it was read — a zombie of an older epoch, or a newer owner —
      // or this very write landed and the SDK's retry of an ambiguous failure found it there.
      if (attempt >= MAX_WRITE_ATTEMPTS) {
        throw new Error(`Shard ${claim.shard.stage}/${claim.shard.shard}: pack ${id.text} kept changing under epoch ${claim.epoch}`);
      }
      seen.set(id.text, parsePack((await this.getPacks(claim.shard, [id])).get(id.text)));
    }
  }

  async commit(claim: ShardClaim, progress: unknown): Promise<void> {
    const record: ShardRecord = {
      epoch: claim.epoch,
      committedEpoch: claim.epoch,
      abortedEpochs: claim.abortedEpochs,
      progress,
      layout: this.grown.get(claim) ?? claim.layout,
    };
    const encoded = encodeProgress(JSON.stringify(progress));
    if (!(await this.putRecord(claim.shard, record, { kind: 'uncommitted', epoch: claim.epoch }, encoded))) {
      // The condition failed: either a newer claim fenced this one, or this very commit landed
      // and a retry of an ambiguous failure (a timeout, a 5xx) found it done — perhaps after a
      // newer claim, which leaves a committed epoch committed. Only a claim over an epoch that
      // never committed aborts it, so the record tells the two apart for good.
      const current = await this.getRecord(claim.shard);
      if (!current || !isCommitted(current, claim.epoch)) throw new ShardFencedError(claim.shard, claim.epoch);
      if (current.epoch !== claim.epoch) return;
    }
    // As JSON, as DynamoDB keeps it: a claim over the copy sees what a claim that read the record would.
    this.lastCommitted.set(shardId(claim.shard), { record, progress: encoded });
  }

  peek(shard: ShardRef): Promise<ShardRecord | undefined> {
    return this.getRecord(shard);
  }

  private seenBy(claim: ShardClaim): Map<string, Pack | undefined> {
    let seen = this.seen.get(claim);
    if (!seen) this.seen.set(claim, (seen = new Map<string, Pack | undefined>()));
    return seen;
  }
}

/**
 * Every key's committed state among a shard's stored packs, as a reader would see it now: for
 * checking a test's outcome and for the in-memory twin.
 */
export function committedStateOf(record: ShardRecord | undefined, packs: ReadonlyMap<string, StoredPack>): Map<string, KeyState> {
  const layout = record?.layout ?? INITIAL_LAYOUT;
  const reader = { committedEpoch: record?.committedEpoch ?? 0, abortedEpochs: record?.abortedEpochs ?? [] };
  const state = new Map<string, KeyState>();
  // Only the layout's buckets hold what a reader sees: spilled keys' items are read through
  // their markers, and buckets of splits that never committed not at all.
  for (let bucket = 0; bucket < layout.buckets; bucket++) {
    for (const [key, item] of parsePack(packs.get(bucketPackText(bucket)))?.entries ?? []) {
      // Copies a split left behind in the ancestor.
      if (bucketOf(packHash(key), layout.buckets) !== bucket) continue;
      const visible = visibleState(reader, item);
      const value =
        typeof visible === 'number'
          ? spilledState(reader, key, visible, visibleEpoch(reader, item), (chunk) => parsePack(packs.get(spillPackText(key, chunk)))?.entries.get(key))
          : visible;
      if (value) state.set(key, value as KeyState);
    }
  }
  return state;
}
