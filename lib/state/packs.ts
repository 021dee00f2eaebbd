import { stableHash, type KeyRef } from './keys.js';

/**
 * Packs: how a shard's keys share DynamoDB items (docs/PROTOCOL.md, "Key packs"). A write
 * costs one write unit per started kilobyte of the whole item, so one item per key pays a unit
 * for a few dozen bytes; a pack holds the keys of one hash bucket, and a batch that changes
 * many keys writes each pack it touched once.
 *
 * The buckets grow by linear hashing: `buckets` packs, bucket `b` splitting into `b` and
 * `b + 2^level` in turn, so that the layout is a few numbers committed with the shard record and
 * a key's pack is known before anything is read.
 */
export interface PackLayout {
  readonly buckets: number;
  /** The bytes of the visible states and keys, as the commits that wrote them measured them. */
  readonly liveBytes: number;
  /**
   * The share of the live bytes the shard's batches change, averaged over the last few: what
   * decides how large its packs are ({@link packTarget}). A new shard starts at 1, with dense
   * packs, since buckets can split later and never merge.
   */
  readonly density: number;
}

export const INITIAL_LAYOUT: PackLayout = { buckets: 1, liveBytes: 0, density: 1 };

/**
 * The share of a pack's JSON its item stores, deflated, as the price model counts it. One
 * operator's states repeat their field names and their keys' shapes, so a pack's entries deflate
 * to a third of their JSON or less (q17's counts, the seed's totals, q18's bids with their URLs);
 * state of random text barely deflates, and costs more units than the model counts.
 */
const STORED_SHARE = 0.4;

/**
 * Live bytes (JSON) a fine pack holds on average. A changed key keeps its previous value beside
 * the new one until its epoch commits, and a bucket linear hashing has not split yet holds twice
 * a split one's keys, so a pack stores under a kilobyte deflated, one write unit, most of the
 * time: a batch that changes a few keys among many then pays about a unit per pack it touches,
 * and touches fewer packs than if they were counted by their JSON (which made a batch of sparse
 * keys take a request per key or two, each about 0.4 ms of the function's CPU).
 */
export const PACK_LIVE_BYTES = 750;

/**
 * Live bytes a pack holds on average when the shard's batches change nearly every key: such a
 * batch pays the same units whatever the packs' size, and fewer, larger packs save the requests'
 * Lambda CPU. Under 200 KB of JSON with `prev` beside `cur` even in a bucket not split yet, and far less stored.
 */
export const DENSE_PACK_LIVE_BYTES = 64 * PACK_LIVE_BYTES;

/** The weight of a batch in the layout's density: a run of four or five sparse batches makes packs fine, one alone does not. */
const DENSITY_WEIGHT = 1 / 2;

/**
 * A write request's Lambda CPU as a share of a write unit's price: about 0.4 ms at 1 GB, or
 * $0.000000012, against $0.000000625 a unit.
 */
const REQUEST_PRICE_IN_UNITS = 1 / 50;

/** How much cheaper fine packs must be for a shard to split into them, since buckets never merge. */
const SPLIT_MARGIN = 0.1;

/**
 * A key whose state is larger lives in an item of its own, with a marker in its pack: so that
 * it neither makes its neighbours' writes cost more units nor fills a pack toward 400 KB.
 */
export const SPILL_STATE_BYTES = 4_096;

/** No pack may store more than this (its entries deflated): DynamoDB refuses items over 400 KB, keys and attribute names included. */
export const MAX_PACK_BYTES = 399 * 1024;

/** A key's bucket hash: FNV-1a finished with murmur3's mixer, so that it is independent of the key group. */
export function packHash(serializedKey: string): number {
  let h = stableHash(serializedKey);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function levelOf(buckets: number): number {
  return 31 - Math.clz32(buckets);
}

/** The bucket of a key's hash among `buckets` linear-hashing buckets. */
export function bucketOf(hash: number, buckets: number): number {
  if (buckets <= 1) return 0;
  const level = levelOf(buckets);
  const wide = hash % 2 ** (level + 1);
  return wide < buckets ? wide : hash % 2 ** level;
}

/** The bucket among the first `buckets` whose split made `bucket`: the pack its keys lived in. */
export function ancestorOf(bucket: number, buckets: number): number {
  let ancestor = bucket;
  while (ancestor >= buckets) ancestor -= 2 ** levelOf(ancestor);
  return ancestor;
}

/**
 * The most one item of a spilled key may store of its state (deflated): the item keeps two
 * values (the newest and the last committed one), within DynamoDB's 400 KB, with room for its
 * keys. A larger state is cut into chunks, an item each.
 */
export const MAX_CHUNK_BYTES = 190 * 1024;

/** How a store packs keys; the defaults suit DynamoDB's pricing, and the simulation draws small ones to split and spill often. */
export interface PackOptions {
  /** Live bytes a fine pack holds on average (default {@link PACK_LIVE_BYTES}). */
  readonly liveBytesPerPack?: number;
  /** Live bytes a pack holds on average when batches change nearly every key (default 64 fine packs' worth: {@link DENSE_PACK_LIVE_BYTES}). */
  readonly denseLiveBytesPerPack?: number;
  /** A key whose state is larger lives in an item of its own (default {@link SPILL_STATE_BYTES}). */
  readonly spillStateBytes?: number;
  /** A spilled key's state larger than this, deflated, is cut into chunks of at most this size, an item each (default {@link MAX_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
}

/** What a batch's writes did to a shard's live bytes. */
export interface BatchWrites {
  /** How the live bytes changed. */
  readonly delta: number;
  /** The live bytes of the keys it wrote, each at the larger of its sizes before and after. */
  readonly changedBytes: number;
  readonly changedKeys: number;
}

/**
 * The expected price of a batch's pack writes, in write units, with packs of `target` live bytes
 * in a shard of `liveBytes` whose batches change `density` of them, keys of `keyBytes` each: the
 * packs it touches, each billed a unit per started kilobyte it stores deflated, `prev` beside
 * `cur` for its changed keys, and its request's CPU.
 */
function packWritesPrice(liveBytes: number, density: number, keyBytes: number, target: number): number {
  const packs = Math.max(1, Math.ceil(liveBytes / target));
  const keys = Math.max(1, liveBytes / Math.max(1, keyBytes));
  const written = Math.min(packs, keys);
  const touched = written * (1 - (1 - Math.min(1, density)) ** Math.max(1, keys / packs));
  return touched * (writeUnits((liveBytes / written) * (1 + density) * STORED_SHARE) + REQUEST_PRICE_IN_UNITS);
}

/**
 * The live bytes per pack for a shard's next writes: `fine` packs (about a unit each) or
 * `dense` ones, whichever the batches' density makes cheaper. A batch that changes a key in
 * nearly every fine pack pays no fewer units for them than for a few large packs, and more
 * requests. Fine packs must be cheaper by {@link SPLIT_MARGIN}: a split is for good.
 */
function packTarget(liveBytes: number, density: number, keyBytes: number, fine: number, dense: number): number {
  const price = (target: number) => packWritesPrice(liveBytes, density, keyBytes, target);
  return price(fine) < price(dense) * (1 - SPLIT_MARGIN) ? fine : dense;
}

/**
 * The layout after a batch's writes: more buckets as the live bytes grow or the batches grow
 * sparse, never fewer. Any count is safe for the keys, since linear hashing only refines.
 */
export function grownLayout(layout: PackLayout, batch: BatchWrites, fine: number, dense: number): PackLayout {
  if (batch.changedKeys === 0) return layout;
  const liveBytes = Math.max(0, layout.liveBytes + batch.delta);
  const share = Math.min(1, batch.changedBytes / Math.max(1, liveBytes, layout.liveBytes));
  const density = layout.density + DENSITY_WEIGHT * (share - layout.density);
  const target = packTarget(liveBytes, density, batch.changedBytes / batch.changedKeys, fine, dense);
  return { buckets: Math.min(2 ** 30, Math.max(layout.buckets, Math.ceil(liveBytes / target))), liveBytes, density };
}

/** The live bytes a key's state takes in its pack: its key and its state, or a marker if it is spilled. */
export function liveBytesOf(key: KeyRef, stateBytes: number | undefined, spilled: boolean): number {
  if (stateBytes === undefined) return 0;
  return key.serialized.length + (spilled ? 1 : stateBytes) + 8;
}

/** Where an item of keyed state lives: a bucket's pack, or an own item of a spilled key (its first chunk, or a later one). */
export type PackId =
  | { readonly bucket: number; readonly key?: undefined; readonly text: string }
  | { readonly key: KeyRef; readonly chunk: number; readonly bucket?: undefined; readonly text: string };

/** The text that names a bucket's pack among a shard's items. */
export function bucketPackText(bucket: number): string {
  return `b${bucket}`;
}

/**
 * The text that names a spilled key's own item among a shard's items: its first chunk's (where
 * a state of one chunk lives), or a later chunk's. A key is JSON, so no key's text ends as a
 * later chunk's does.
 */
export function spillPackText(serializedKey: string, chunk = 0): string {
  return chunk === 0 ? `k${serializedKey}` : `k${serializedKey}#${chunk}`;
}

export function bucketPack(bucket: number): PackId {
  return { bucket, text: bucketPackText(bucket) };
}

export function spillPack(key: KeyRef, chunk = 0): PackId {
  return { key, chunk, text: spillPackText(key.serialized, chunk) };
}

/** A pack as stored: its entries as JSON, a version that every write raises, and the newest epoch that wrote it. */
export interface StoredPack {
  readonly version: number;
  readonly epoch: number;
  /** The entries' JSON, deflated (a write unit per started kilobyte: the JSON repeats each state's field names); JSON text as versions before compression wrote it. */
  readonly entries: Uint8Array | string;
}

/** The DynamoDB write units of a write of this many bytes. */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}
