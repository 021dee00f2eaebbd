// What a batch records in its shard's commit (the processor's step 7, docs/PROTOCOL.md): a pure
// function of what the batch found and did, so that each rule is stated once and tested from a
// table (test/unit/runtime/batch-progress.test.ts).
import type { TransactionHandle } from '../kafka/transaction-handle.js';
import type { ShardRef } from '../state/shard-store.js';
import { invariant } from '../invariants.js';
import { earliestEventTimer } from './stage-executor.js';
import type { StateDelta } from '../snapshot/checkpoint-state.js';
import type { PendingTransaction, RuntimeProgress, ShardProgress } from './shard-record.js';

/** What one batch of a shard found and did, for its commit. */
export interface BatchOutcome {
  readonly shard: ShardRef;
  /** The shard record's progress as the batch claimed it. */
  readonly claimed: RuntimeProgress;
  /** The claim's epoch. */
  readonly epoch: number;
  /** The last committed checkpoint, from the coordinator record read at the batch's start: what it covers is dropped. */
  readonly committed: number;
  /** The latest checkpoint triggered, as the batch last read it. */
  readonly triggered: number;
  /** The shard's position, executor and flags after the batch. */
  readonly processed: ShardProgress;
  /** Every source partition of the shard is idle after the batch. */
  readonly idle: boolean;
  /** The shard's transactions that no committed checkpoint covers, as step 5a left them (marked committed or not). */
  readonly pending: readonly PendingTransaction[];
  /** This batch's pre-committed EXACTLY_ONCE transaction. */
  readonly transaction: TransactionHandle | undefined;
  /** This batch's state delta: its object's key, or the delta to hold in the record. */
  readonly delta: BatchDelta | undefined;
}

/**
 * A batch's delta as step 4 left it. An inline delta of a batch that wrote no output may come
 * `extended`: the record's last inline delta followed by it, to take that one's place when the
 * same checkpoint covers both (docs/PROTOCOL.md, "Inline deltas").
 */
export type BatchDelta = { readonly object: string } | { readonly inline: StateDelta; readonly extended?: StateDelta };

/** The checkpoint that covers a batch's output: the one it acknowledges now, or else the next. */
export function coveringCheckpoint(claimedAcknowledged: number, triggered: number): number {
  const acknowledged = Math.max(claimedAcknowledged, triggered);
  return acknowledged > claimedAcknowledged ? acknowledged : acknowledged + 1;
}

/**
 * The progress a batch commits. It acknowledges the latest triggered checkpoint (never one
 * before what the shard acknowledged), recording its position, watermark and idleness at it;
 * its transaction and delta are covered by that checkpoint if the batch acknowledges it now,
 * else by the next one; handles and deltas that a committed checkpoint covers are dropped.
 */
export function batchProgress(outcome: BatchOutcome): RuntimeProgress {
  const { claimed, processed, epoch, committed } = outcome;
  const acknowledged = Math.max(claimed.acknowledged, outcome.triggered);
  const acknowledging = acknowledged > claimed.acknowledged;
  const covering = coveringCheckpoint(claimed.acknowledged, outcome.triggered);
  invariant(covering > committed, () => `${where(outcome)}: its output would be covered by checkpoint ${covering}, not after the committed ${committed}`);
  const deltas = claimed.deltas.filter((d) => d.checkpoint > committed);
  const { delta } = outcome;
  const last = deltas.at(-1);
  if (delta && 'inline' in delta && delta.extended && last && 'inline' in last && last.checkpoint === covering) {
    deltas[deltas.length - 1] = { epoch: last.epoch, checkpoint: covering, inline: delta.extended };
  } else if (delta) {
    deltas.push({ epoch, checkpoint: covering, ...('object' in delta ? { object: delta.object } : { inline: delta.inline }) });
  }
  const pending = outcome.transaction ? [...outcome.pending, { handle: outcome.transaction, checkpoint: covering, epoch }] : [...outcome.pending];
  for (const [index, transaction] of pending.entries()) {
    const before = pending[index - 1];
    invariant(before === undefined || before.epoch < transaction.epoch, () => `${where(outcome)}: pending epochs ${pending.map((p) => p.epoch).join(', ')} do not increase`);
  }
  return {
    ...processed,
    pending,
    acknowledged,
    acknowledgedWatermark: acknowledging ? (processed.executor?.watermark ?? Number.MIN_SAFE_INTEGER) : claimed.acknowledgedWatermark,
    acknowledgedIdle: acknowledging ? outcome.idle : claimed.acknowledgedIdle === true,
    acknowledgedNextTimer: acknowledging ? (outcome.idle ? earliestEventTimer(processed.executor) : undefined) : claimed.acknowledgedNextTimer,
    deltas,
    position: acknowledging ? { checkpoint: acknowledged, offset: processed.offset, executor: processed.executor } : claimed.position,
  };
}

function where({ shard, epoch }: BatchOutcome): string {
  return `shard ${shard.stage}/${shard.shard}, epoch ${epoch}`;
}
