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
}
