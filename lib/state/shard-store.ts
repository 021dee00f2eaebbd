import type { KeyRef } from './keys.js';

/**
 * Durable progress and keyed state of shards — the heart of Sluice's exactly-once
 * (DESIGN.md, invariants 2 and 3). One shard is one partition of one stage's input.
 *
 * - **Claim.** An invocation claims a shard before it writes anything: the claim raises the
 *   shard's epoch (its fencing token) and, if the previous owner never committed, records
 *   that owner's epoch as aborted.
 * - **Write.** The invocation writes the new value of every key it changed, tagged with its
 *   epoch. Each key item keeps its newest value (`cur`) and the last committed value before
 *   it (`prev`); a write only replaces an item whose `cur` it has seen, so a zombie (an older
 *   epoch still running) can never overwrite a newer epoch's value.
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
}

export interface StateChange {
  readonly key: KeyRef;
  /** The key's state after the batch; null when every state of the key was cleared. */
  readonly state: KeyState | null;
}

/**
 * The most state one key may hold, as JSON: its item keeps the state twice (the current and
 * the previous epoch's), within DynamoDB's 400 KB per item, with room for its keys.
 */
export const MAX_KEY_STATE_BYTES = 190 * 1024;

/** The first change whose state is more than a key may hold, with its size. */
export function oversizedKeyState(changes: readonly StateChange[]): { key: KeyRef; bytes: number } | undefined {
  for (const { key, state } of changes) {
    const bytes = state === null ? 0 : Buffer.byteLength(JSON.stringify(state));
    if (bytes > MAX_KEY_STATE_BYTES) return { key, bytes };
  }
  return undefined;
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
      `Shard ${shard.stage}/${shard.shard}: the state of key ${shown} would take ${bytes} bytes, more than the ` +
        `${MAX_KEY_STATE_BYTES} a key may hold (its DynamoDB item keeps it twice, within 400 KB). Keep less per key: ` +
        `aggregate (reduce or aggregate instead of process over all elements), set a StateTtlConfig, or shorten the windows.`,
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

export interface ShardStore {
  /**
   * Claims the shard. `expectedKeys` are keys the caller will read under the claim: a store may
   * read them beside the claim, where that reads what a read after it would.
   */
  claim(shard: ShardRef, expectedKeys?: readonly KeyRef[]): Promise<ShardClaim>;
  /** The visible state of each key, as of the claim; keys without state are absent. */
  read(claim: ShardClaim, keys: readonly KeyRef[]): Promise<Map<string, KeyState>>;
  /** Writes the changed keys under the claim's epoch; invisible until `commit`. */
  write(claim: ShardClaim, changes: readonly StateChange[]): Promise<void>;
  /**
   * Makes the claim's writes visible and records `progress`, atomically. Once per claim; a
   * repeat of a commit that landed (the retry of an ambiguous failure) returns without writing.
   */
  commit(claim: ShardClaim, progress: unknown): Promise<void>;
  /** The shard's record as it stands, without claiming: for the coordinator and the commit function. */
  peek(shard: ShardRef): Promise<ShardRecord | undefined>;
  /**
   * Deletes every key item of every shard (shard records stay, so epochs keep rising): for a
   * restore, which then writes the restored keys under fresh claims. Returns how many it deleted.
   */
  deleteKeyedState(): Promise<number>;
}

/** One key's item: the newest value and the last committed value before it. */
export interface KeyItem {
  readonly cur: KeyState | null;
  readonly curEpoch: number;
  readonly prev: KeyState | null;
  readonly prevEpoch: number;
}

export function isCommitted(claim: Pick<ShardClaim, 'committedEpoch' | 'abortedEpochs'>, epoch: number): boolean {
  return epoch <= claim.committedEpoch && !claim.abortedEpochs.some(([from, to]) => epoch >= from && epoch <= to);
}

/** The value a reader with this claim sees in an item: undefined when no committed value exists. */
export function visibleState(claim: ShardClaim, item: KeyItem | undefined): KeyState | null | undefined {
  if (!item) return undefined;
  if (isCommitted(claim, item.curEpoch)) return item.cur;
  if (item.prevEpoch >= 0 && isCommitted(claim, item.prevEpoch)) return item.prev;
  return undefined;
}

/** The item an epoch writes over `existing`: `prev` keeps the last committed value. */
export function nextItem(claim: ShardClaim, existing: KeyItem | undefined, state: KeyState | null): KeyItem {
  const visible = visibleState(claim, existing);
  if (!existing || visible === undefined) return { cur: state, curEpoch: claim.epoch, prev: null, prevEpoch: -1 };
  const prevEpoch = isCommitted(claim, existing.curEpoch) ? existing.curEpoch : existing.prevEpoch;
  return { cur: state, curEpoch: claim.epoch, prev: visible, prevEpoch };
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

/** Requests a store made, for the cost metrics (DynamoDB requests are the bill). */
export interface StoreRequestCounts {
  recordReads: number;
  recordWrites: number;
  itemReadRequests: number;
  itemsRead: number;
  itemWrites: number;
}

const MAX_WRITE_ATTEMPTS = 5;

function shardId({ stage, shard }: ShardRef): string {
  return `${stage}/${shard}`;
}

/**
 * The protocol over a few storage primitives, so that the DynamoDB store and its in-memory
 * twin differ only in how they store items — and pass the same contract tests.
 */
export abstract class ItemShardStore implements ShardStore {
  /** The record this store's latest commit of each shard wrote, for the next claim (see {@link claim}). */
  private readonly lastCommitted = new Map<string, { readonly record: ShardRecord; readonly progress: string | undefined }>();
  /** Items read under each claim, so that a write is conditional on what its batch saw. */
  private readonly seen = new WeakMap<ShardClaim, Map<string, KeyItem | undefined>>();
  /** Items read beside a claim (see {@link claim}), for its first read. */
  private readonly readBeside = new WeakMap<ShardClaim, { readonly keys: ReadonlySet<string>; readonly items: Promise<Map<string, KeyItem>> }>();
  readonly requests: StoreRequestCounts = { recordReads: 0, recordWrites: 0, itemReadRequests: 0, itemsRead: 0, itemWrites: 0 };

  protected abstract getRecord(shard: ShardRef): Promise<ShardRecord | undefined>;
  /** Replaces the record if it meets `condition`. */
  protected abstract putRecordIf(shard: ShardRef, record: ShardRecord, condition: RecordCondition): Promise<boolean>;
  protected abstract getItems(shard: ShardRef, keys: readonly KeyRef[]): Promise<Map<string, KeyItem>>;
  /** Writes the item if the stored one's `curEpoch` is still `expectedCurEpoch` (undefined: if there is none). */
  protected abstract putItemIf(shard: ShardRef, key: KeyRef, item: KeyItem, expectedCurEpoch: number | undefined): Promise<boolean>;
  protected abstract writeConcurrency(): number;
  abstract deleteKeyedState(): Promise<number>;

  /**
   * Claims the shard: a new epoch over the record as it is. A store whose own commit wrote the
   * record last claims over that copy without reading it first, and falls back to reading when
   * the conditional write finds the record changed: every write of a record moves its epoch or
   * its committed epoch, so the condition cannot hold over anything but that very record.
   *
   * That claim also reads `expectedKeys` beside its write. If it holds, no one claimed the shard
   * since this store's commit, so every item written since came from an epoch the claim sees as
   * aborted, conditional on the item it read: what the items show as committed is what they
   * show once the claim lands, and a write over an item changed meanwhile fails its condition
   * and reads it again, as it would after any read.
   */
  async claim(shard: ShardRef, expectedKeys: readonly KeyRef[] = []): Promise<ShardClaim> {
    const id = shardId(shard);
    const committed = this.lastCommitted.get(id);
    this.lastCommitted.delete(id);
    if (committed) {
      const items = expectedKeys.length > 0 ? this.getItems(shard, expectedKeys) : undefined;
      items?.catch(() => undefined);
      const claim = await this.claimOver(shard, { ...committed.record, progress: committed.progress === undefined ? undefined : JSON.parse(committed.progress) });
      if (claim) {
        if (items) this.readBeside.set(claim, { keys: new Set(expectedKeys.map((key) => key.serialized)), items });
        return claim;
      }
    }
    for (;;) {
      const claim = await this.claimOver(shard, await this.getRecord(shard));
      if (claim) return claim;
    }
  }

  /** A claim over `record` as read (or as last committed here); undefined if the record is no longer that. */
  private async claimOver(shard: ShardRef, record: ShardRecord | undefined): Promise<ShardClaim | undefined> {
    const previousEpoch = record?.epoch ?? 0;
    const committedEpoch = record?.committedEpoch ?? 0;
    const abortedEpochs =
      record && previousEpoch > committedEpoch ? withAborted(record.abortedEpochs, previousEpoch) : (record?.abortedEpochs ?? []);
    const next: ShardRecord = { epoch: previousEpoch + 1, committedEpoch, abortedEpochs, progress: record?.progress };
    const condition: RecordCondition = record
      ? { kind: 'unchanged', epoch: record.epoch, committedEpoch: record.committedEpoch }
      : { kind: 'absent' };
    if (!(await this.putRecordIf(shard, next, condition))) return undefined;
    return { shard, epoch: next.epoch, committedEpoch, abortedEpochs, progress: next.progress };
  }

  async read(claim: ShardClaim, keys: readonly KeyRef[]): Promise<Map<string, KeyState>> {
    const items = await this.itemsUnder(claim, keys);
    const seen = this.seenBy(claim);
    const result = new Map<string, KeyState>();
    for (const key of keys) {
      const item = items.get(key.serialized);
      seen.set(key.serialized, item);
      const state = visibleState(claim, item);
      // A copy: callers change state in place, and `seen` must keep what was read, from which
      // the write computes the item's `prev`.
      if (state) result.set(key.serialized, structuredClone(state));
    }
    return result;
  }

  /** The items of `keys`: those read beside the claim, if that read succeeded, and the rest read now. */
  private async itemsUnder(claim: ShardClaim, keys: readonly KeyRef[]): Promise<Map<string, KeyItem>> {
    const beside = this.readBeside.get(claim);
    this.readBeside.delete(claim);
    const early = await beside?.items.catch(() => undefined);
    if (!beside || !early) return this.getItems(claim.shard, keys);
    const missing = keys.filter((key) => !beside.keys.has(key.serialized));
    if (missing.length === 0) return early;
    return new Map([...early, ...(await this.getItems(claim.shard, missing))]);
  }

  async write(claim: ShardClaim, changes: readonly StateChange[]): Promise<void> {
    const oversized = oversizedKeyState(changes);
    if (oversized) throw new KeyStateTooLargeError(claim.shard, oversized.key, oversized.bytes);
    const seen = this.seenBy(claim);
    let next = 0;
    const worker = async () => {
      while (next < changes.length) {
        const change = changes[next++];
        if (change) await this.writeOne(claim, change, seen);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.writeConcurrency(), changes.length) }, worker));
  }

  private async writeOne(claim: ShardClaim, { key, state }: StateChange, seen: Map<string, KeyItem | undefined>) {
    let existing = seen.has(key.serialized) ? seen.get(key.serialized) : (await this.getItems(claim.shard, [key])).get(key.serialized);
    for (let attempt = 1; ; attempt++) {
      if (existing && existing.curEpoch > claim.epoch) throw new ShardFencedError(claim.shard, claim.epoch);
      const item = nextItem(claim, existing, state);
      if (await this.putItemIf(claim.shard, key, item, existing?.curEpoch)) {
        seen.set(key.serialized, item);
        return;
      }
      // Someone wrote the key since it was read — a zombie of an older epoch, or a newer owner.
      if (attempt >= MAX_WRITE_ATTEMPTS) {
        throw new Error(`Shard ${claim.shard.stage}/${claim.shard.shard}: key ${key.serialized} kept changing under epoch ${claim.epoch}`);
      }
      existing = (await this.getItems(claim.shard, [key])).get(key.serialized);
    }
  }

  async commit(claim: ShardClaim, progress: unknown): Promise<void> {
    const record: ShardRecord = {
      epoch: claim.epoch,
      committedEpoch: claim.epoch,
      abortedEpochs: claim.abortedEpochs,
      progress,
    };
    const landed = async () => {
      if (await this.putRecordIf(claim.shard, record, { kind: 'uncommitted', epoch: claim.epoch })) return true;
      // The condition failed: either a newer claim fenced this one, or this very commit landed
      // and a retry of an ambiguous failure (a timeout, a 5xx) found it done.
      const current = await this.getRecord(claim.shard);
      return current?.epoch === claim.epoch && current.committedEpoch === claim.epoch;
    };
    if (!(await landed())) throw new ShardFencedError(claim.shard, claim.epoch);
    // As JSON, as DynamoDB keeps it: a claim over the copy sees what a claim that read the record would.
    this.lastCommitted.set(shardId(claim.shard), { record, progress: JSON.stringify(progress) });
  }

  peek(shard: ShardRef): Promise<ShardRecord | undefined> {
    return this.getRecord(shard);
  }

  private seenBy(claim: ShardClaim): Map<string, KeyItem | undefined> {
    let seen = this.seen.get(claim);
    if (!seen) this.seen.set(claim, (seen = new Map<string, KeyItem | undefined>()));
    return seen;
  }
}
