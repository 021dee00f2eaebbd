import type { TransactionCommitter } from '../kafka/clients.js';
import { TransactionLostError } from '../kafka/errors.js';
import type { PendingTransaction } from './shard-record.js';

/** What {@link commitInEpochOrder} got through. */
export interface EpochOrderCommit {
  /** The transactions now committed (by this call or before), in epoch order. */
  readonly committed: readonly PendingTransaction[];
  /** The first transaction the broker lost, and why; none after it was committed. */
  readonly lost?: { readonly transaction: PendingTransaction; readonly error: TransactionLostError };
}

/**
 * Commits a shard's pre-committed transactions in epoch order, up to the first the broker
 * lost: the transactions after a lost one are its rollback's to replay, never to commit (a
 * committed later transaction would be written again by the replay).
 */
export async function commitInEpochOrder(committer: TransactionCommitter, pending: readonly PendingTransaction[]): Promise<EpochOrderCommit> {
  const committed: PendingTransaction[] = [];
  for (const transaction of pending) {
    try {
      await committer.commit(transaction.handle);
      committed.push(transaction);
    } catch (error) {
      if (!(error instanceof TransactionLostError)) throw error;
      return { committed, lost: { transaction, error } };
    }
  }
  return { committed };
}

