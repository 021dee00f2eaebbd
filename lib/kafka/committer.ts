import { ClusterConnection, type KafkaConnectionOptions } from './connection.js';
import type { TransactionDescription } from './describe-transactions.js';
import { TransactionAlreadyCommittedError, TransactionLostError, transactionLostCode } from './errors.js';
import type { TransactionHandle } from './transaction-handle.js';
import { CommittedRangeReader } from './range-reader.js';
import { describeTransaction, withTransactionCoordinator } from './transaction-coordinator.js';

/**
 * - `committed`: this call committed it.
 * - `already-committed`: it was committed before (by an earlier or a concurrent call).
 * - `empty`: it holds no records (nothing was written under this epoch); nothing to commit.
 */
export type CommitOutcome = 'committed' | 'already-committed' | 'empty';
/**
 * - `aborted`: this call aborted it; `already-aborted`: it was aborted before.
 * - `superseded`: the transactional id has moved on to a newer producer epoch (or the broker
 *   has forgotten it), so nothing written under this handle can become visible any more.
 * - `empty`: it holds no records.
 */
export type AbortOutcome = 'aborted' | 'already-aborted' | 'superseded' | 'empty';

type Relation = 'same' | 'fenced' | 'unknown';

function relationTo(handle: TransactionHandle, description: TransactionDescription | undefined): Relation {
  if (!description) return 'unknown';
  if (description.producerId === handle.producerId && description.producerEpoch === handle.producerEpoch) {
    return 'same';
  }
  return 'fenced';
}

function fencedReason(description: TransactionDescription): string {
  return (
    `the transactional id now belongs to producer ${description.producerId} epoch ${description.producerEpoch} ` +
    `(state ${description.state}): the broker aborted this transaction when its timeout passed or when the id was ` +
    `initialised again`
  );
}

const UNKNOWN_REASON = 'the broker does not know the transactional id (never written, or expired)';

/**
 * Finalises pre-committed transactions from any process, by handle — Flink's
 * KafkaCommitter. Before ending a transaction it asks the coordinator for the id's state,
 * so that it can tell a first commit from a repeated one, and a lost transaction from
 * both. Safe to run twice at once for the same handle: both calls report success.
 */
export class KafkaCommitter {
  private readonly connection: ClusterConnection;
  /** Connected on the first lost verdict only, to ask the log how the transaction ended. */
  private reader: CommittedRangeReader | undefined;

  constructor(private readonly options: KafkaConnectionOptions) {
    this.connection = new ClusterConnection(options);
  }

  /** The coordinator's view of `transactionalId`, or undefined when it does not know it. */
  async describe(transactionalId: string): Promise<TransactionDescription | undefined> {
    return describeTransaction(await this.connection.ready(), transactionalId);
  }

  /**
   * Commits the transaction. Throws {@link TransactionLostError} when the broker aborted it
   * or fenced its producer before it committed: its records are gone and must be produced
   * again. A transaction committed before its id moved on is `already-committed`: the log
   * shows its first record under read_committed.
   */
  async commit(handle: TransactionHandle): Promise<CommitOutcome> {
    try {
      return await this.commitByState(handle);
    } catch (error) {
      if (error instanceof TransactionLostError && (await this.committedInLog(handle))) return 'already-committed';
      throw error;
    }
  }

  /**
   * Whether the transaction's first record is committed. Once its id is initialised again the
   * coordinator no longer says how the transaction ended, but the log keeps it: an aborted
   * transaction's records are left out of a read_committed read. The read waits while an
   * open transaction holds the last stable offset before the record, and fails if retention
   * has deleted it.
   */
  private async committedInLog({ firstRecord }: TransactionHandle): Promise<boolean> {
    if (!firstRecord) return false;
    this.reader ??= new CommittedRangeReader(this.options);
    const [record] = await this.reader.read({ ...firstRecord, from: firstRecord.offset, to: firstRecord.offset + 1 });
    return record?.offset === firstRecord.offset;
  }

  private async commitByState(handle: TransactionHandle): Promise<CommitOutcome> {
    const description = await this.describe(handle.transactionalId);
    const relation = relationTo(handle, description);
    if (relation === 'unknown' || !description) throw new TransactionLostError(handle, UNKNOWN_REASON);
    if (relation === 'fenced') throw new TransactionLostError(handle, fencedReason(description));
    switch (description.state) {
      case 'Empty':
        return 'empty';
      case 'CompleteCommit':
        return 'already-committed';
      case 'PrepareCommit':
        await this.endTransaction(handle, true);
        return 'already-committed';
      case 'Ongoing':
        await this.endTransaction(handle, true);
        return 'committed';
      default:
        throw new TransactionLostError(handle, `the broker has it in state ${description.state}`);
    }
  }

  /**
   * Aborts the transaction. Aborting one that is already aborted or fenced succeeds; aborting
   * a committed one throws {@link TransactionAlreadyCommittedError}.
   */
  async abort(handle: TransactionHandle): Promise<AbortOutcome> {
    const description = await this.describe(handle.transactionalId);
    const relation = relationTo(handle, description);
    // The coordinator aborts an open transaction when it bumps the epoch, and forgets an id
    // only after its transaction ended, so neither leaves anything of this handle to abort.
    if (relation !== 'same' || !description) return 'superseded';
    switch (description.state) {
      case 'Empty':
        return 'empty';
      case 'CompleteAbort':
      case 'PrepareEpochFence':
      case 'Dead':
        return 'already-aborted';
      case 'PrepareAbort':
        await this.endTransaction(handle, false);
        return 'already-aborted';
      case 'Ongoing':
        await this.endTransaction(handle, false);
        return 'aborted';
      default:
        throw new TransactionAlreadyCommittedError(handle);
    }
  }

  private async endTransaction(handle: TransactionHandle, commit: boolean): Promise<void> {
    const cluster = await this.connection.ready();
    try {
      await withTransactionCoordinator(cluster, handle.transactionalId, (coordinator) =>
        coordinator.endTxn({ ...handle, transactionResult: commit }),
      );
    } catch (error) {
      const code = transactionLostCode(error);
      if (code === undefined) throw error;
      if (!commit) throw new TransactionAlreadyCommittedError(handle);
      throw new TransactionLostError(handle, `EndTxn answered error code ${code} (aborted or fenced meanwhile)`);
    }
  }

  async close(): Promise<void> {
    await this.reader?.close();
    await this.connection.close();
  }
}

/** Commits one transaction by handle, from any process; see {@link KafkaCommitter.commit}. */
export async function commitTransaction(
  handle: TransactionHandle,
  options: KafkaConnectionOptions,
): Promise<CommitOutcome> {
  const committer = new KafkaCommitter(options);
  try {
    return await committer.commit(handle);
  } finally {
    await committer.close();
  }
}

/** Aborts one transaction by handle, from any process; see {@link KafkaCommitter.abort}. */
export async function abortTransaction(
  handle: TransactionHandle,
  options: KafkaConnectionOptions,
): Promise<AbortOutcome> {
  const committer = new KafkaCommitter(options);
  try {
    return await committer.abort(handle);
  } finally {
    await committer.close();
  }
}
