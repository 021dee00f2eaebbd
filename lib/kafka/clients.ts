import { KafkaAdmin, type TopicDescription, type TopicWriteLimits } from './admin.js';
import { KafkaCommitter, type AbortOutcome, type CommitOutcome } from './committer.js';
import type { TransactionDescription } from './describe-transactions.js';
import { ClusterConnection, type KafkaConnectionOptions } from './connection.js';
import { CommittedRangeReader, type OffsetRange } from './range-reader.js';
import type { KafkaRecord, OutputRecord } from './records.js';
import type { TransactionHandle } from './transaction-handle.js';
import { TransactionalWriter } from './transactional-writer.js';
import { createRecordWriter, type NonTransactionalGuarantee, type RecordWriter } from './writer.js';

/**
 * What the runtime asks of Kafka, and nothing more: the seam between Sluice's protocol and a
 * broker. {@link connectKafka} serves it from a real cluster; the simulation's twin
 * (lib/testing/kafka-twin.ts) serves it in memory, and one contract suite holds both to the
 * same behaviour (test/integration/kafka/kafka-clients-contract.ts).
 */
export interface KafkaClients {
  readonly admin: TopicAdmin;
  readonly reader: CommittedReader;
  readonly committer: TransactionCommitter;
  /**
   * Initialises `transactionalId` — aborting whatever transaction was open under it and
   * fencing its producer — and opens a new transaction to write into and pre-commit.
   */
  beginTransaction(options: TransactionOptions): Promise<TransactionWriter>;
  /** A producer for NONE or AT_LEAST_ONCE output. */
  recordWriter(guarantee: NonTransactionalGuarantee): RecordWriter;
  close(): Promise<void>;
}

export interface TransactionOptions {
  readonly transactionalId: string;
  /** The broker aborts the transaction if it is not committed within this time. */
  readonly transactionTimeoutMs: number;
}

/** Topics, partitions and consumer-group offsets: what starting offsets and shard lists need. */
export interface TopicAdmin {
  listTopics(): Promise<string[]>;
  describeTopics(topics: readonly string[]): Promise<TopicDescription[]>;
  /** The group's committed offset per partition (partitions without one are absent or -1). */
  groupOffsets(groupId: string, topic: string): Promise<Map<number, number>>;
  offsetsForTimestamp(topic: string, timestamp: number): Promise<Map<number, number>>;
  writeLimits(topics: readonly string[]): Promise<TopicWriteLimits[]>;
}

/** read_committed reads of offset ranges, without a consumer group. */
export interface CommittedReader {
  /** Every committed record of the range; waits while an open transaction holds the range back. */
  read(range: OffsetRange): Promise<KafkaRecord[]>;
  /** What a read_committed poll from `from` returns now, and the offset to read next. */
  readAvailable(topic: string, partition: number, from: number, maxRecords: number): Promise<{ records: KafkaRecord[]; next: number }>;
  /**
   * The partition's log end offset (high watermark): past every record written, those of open
   * transactions too, which a read_committed read reaches only once they end.
   */
  logEnd(topic: string, partition: number): Promise<number>;
}

/** Finishes pre-committed transactions by handle, from any process (Flink's KafkaCommitter). */
export interface TransactionCommitter {
  /** The transaction coordinator's view of the id: undefined when it does not know it. */
  describe(transactionalId: string): Promise<TransactionDescription | undefined>;
  /** Throws TransactionLostError when the broker aborted the transaction or fenced its producer. */
  commit(handle: TransactionHandle): Promise<CommitOutcome>;
  /** Throws TransactionAlreadyCommittedError for a committed transaction. */
  abort(handle: TransactionHandle): Promise<AbortOutcome>;
}

/** One open transaction: written into, then pre-committed (flushed, left open for a committer). */
export interface TransactionWriter {
  readonly handle: TransactionHandle;
  write(records: readonly OutputRecord[]): Promise<void>;
  /** Resolves with the handle once every write is acknowledged; fails if any write failed. */
  preCommit(): Promise<TransactionHandle>;
  close(): Promise<void>;
}

/** {@link KafkaClients} on a real cluster, over one connection for the transactional writers. */
export function connectKafka(options: KafkaConnectionOptions): KafkaClients {
  const admin = new KafkaAdmin(options);
  const reader = new CommittedRangeReader(options);
  const committer = new KafkaCommitter(options);
  const connection = new ClusterConnection(options);
  return {
    admin,
    reader,
    committer,
    beginTransaction: async ({ transactionalId, transactionTimeoutMs }) =>
      (await TransactionalWriter.begin({ ...options, transactionalId, transactionTimeoutMs, connection })).writer,
    recordWriter: (guarantee) => createRecordWriter(guarantee, options),
    close: async () => {
      await committer.close();
      await connection.close();
      await reader.close();
      await admin.close();
    },
  };
}
