// Sluice's Kafka layer: the only place that touches kafkajs (DESIGN.md).
export { KafkaAdmin, type ClusterDescription, type TopicDescription, type TopicSpec, type TopicWriteLimits } from './admin.js';
export { KafkaCommitter, abortTransaction, commitTransaction, type AbortOutcome, type CommitOutcome } from './committer.js';
export {
  BROKERS_ENVIRONMENT_VARIABLE,
  brokersFromEnvironment,
  kafkaFromEnvironment,
  parseBrokerList,
  requestListener,
  type KafkaConnectionOptions,
  type KafkaRequestSpan,
} from './connection.js';
export { DeliveryGuarantee } from './delivery-guarantee.js';
export { partitionForKey } from './partitioning.js';
export type { TransactionDescription, TransactionStateName } from './describe-transactions.js';
export { MissingTopicsError, TransactionAlreadyCommittedError, TransactionLostError } from './errors.js';
export { CommittedRangeReader, RangeReadError, type OffsetRange, type RangeReaderOptions } from './range-reader.js';
export type { KafkaRecord, OutputRecord, RecordHeader, TimestampType } from './records.js';
export type { TransactionHandle } from './transaction-handle.js';
export {
  TransactionalWriter,
  type AbortedTransaction,
  type OpenTransaction,
  type TransactionalWriterOptions,
} from './transactional-writer.js';
export { createRecordWriter, type NonTransactionalGuarantee, type RecordWriter } from './writer.js';
export { KafkaAuthenticationError, type AwsCredentialsProvider, type KafkaAuthentication, type KafkaTlsOptions } from './authentication.js';
export {
  connectKafka,
  type CommittedReader,
  type KafkaClients,
  type TopicAdmin,
  type TransactionCommitter,
  type TransactionOptions,
  type TransactionWriter,
} from './clients.js';
