/**
 * Names one Kafka transaction so that any process can commit or abort it. The writer
 * initialises its transactional id afresh for every transaction, so the broker gives every
 * transaction a new (producerId, producerEpoch) and a handle never names two transactions.
 */
export interface TransactionHandle {
  readonly transactionalId: string;
  /** Int64 as a decimal string. */
  readonly producerId: string;
  readonly producerEpoch: number;
  /**
   * Where one of its records went. Once the id has moved on, the broker no longer says how the
   * transaction ended; the log does: that record is readable with read_committed only if the
   * transaction committed. Absent when nothing was written.
   */
  readonly firstRecord?: RecordPosition;
}

export interface RecordPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/** A transaction's identity as one string: its id and the producer id and epoch that wrote it. */
export function transactionKey({ transactionalId, producerId, producerEpoch }: TransactionHandle): string {
  return `${transactionalId}\u0000${producerId}\u0000${producerEpoch}`;
}
