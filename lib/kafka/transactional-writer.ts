import { Partitioners } from 'kafkajs';
import type Cluster from 'kafkajs/src/cluster/index.js';
import type { Broker, ProducePartitionData } from 'kafkajs/src/cluster/index.js';
import { ClusterConnection, type KafkaConnectionOptions } from './connection.js';
import type { TransactionStateName } from './describe-transactions.js';
import { ErrorCode, kafkaErrorCode, TransactionLostError, transactionLostCode } from './errors.js';
import { estimatedSize, toKafkaMessage, type KafkaMessage as Message } from './messages.js';
import type { OutputRecord } from './records.js';
import type { RecordPosition, TransactionHandle } from './transaction-handle.js';
import { describeTransaction, withTransactionCoordinator } from './transaction-coordinator.js';

export interface TransactionalWriterOptions extends KafkaConnectionOptions {
  readonly transactionalId: string;
  /** The broker aborts the transaction if it is not committed within this time. */
  readonly transactionTimeoutMs: number;
  /** Upper bound for one record batch; keep it below the topic's `max.message.bytes`. Default 900 KB. */
  readonly maxBatchBytes?: number;
  /**
   * A connection to reuse (a Lambda container keeps one across invocations) rather than
   * connecting for this transaction alone; the writer leaves it open when it closes.
   */
  readonly connection?: ClusterConnection;
  /**
   * Describe the id before initialising it, so that `begin` reports the transaction the
   * initialisation aborted as `aborted`: a DescribeTransactions more. Default false.
   */
  readonly reportAborted?: boolean;
}

/** A transaction that initialising its transactional id aborted. */
export interface AbortedTransaction {
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly state: TransactionStateName;
  readonly partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[];
}

/**
 * Everything another process needs to keep writing into an open transaction: its handle
 * and the next sequence number of every partition written so far. Plain JSON.
 */
export interface OpenTransaction {
  readonly handle: TransactionHandle;
  readonly partitions: readonly { readonly topic: string; readonly partition: number; readonly nextSequence: number }[];
}

const MAX_SEQUENCE = 2 ** 31;
const DEFAULT_MAX_BATCH_BYTES = 900_000;
const RESEND_DEADLINE_MS = 30_000;

interface PartitionBatch {
  readonly topic: string;
  readonly partition: number;
  readonly firstSequence: number;
  readonly messages: Message[];
}

function partitionId(topic: string, partition: number): string {
  return JSON.stringify([topic, partition]);
}

/**
 * Writes records into one Kafka transaction and leaves it open (pre-committed) for a
 * {@link KafkaCommitter} in any process to finish. It speaks to the brokers directly
 * (InitProducerId, AddPartitionsToTxn, Produce with explicit sequence numbers) rather than
 * through kafkajs's producer, because that producer hides the producer id and epoch and
 * cannot continue a transaction that another process opened.
 *
 * Every {@link TransactionalWriter.begin} initialises the transactional id again: the
 * coordinator aborts whatever was open under it and bumps the epoch, so each transaction
 * gets a handle of its own.
 */
export class TransactionalWriter {
  private readonly sequences = new Map<string, { topic: string; partition: number; next: number }>();
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly maxBatchBytes: number;
  private failure: Error | undefined;
  private writing: Promise<void> = Promise.resolve();
  private firstRecord: RecordPosition | undefined;
  /** The transaction's identity, as the broker's requests carry it. */
  readonly handle: TransactionHandle;

  private constructor(
    private readonly connection: ClusterConnection,
    private readonly cluster: Cluster,
    private readonly options: TransactionalWriterOptions,
    { firstRecord, ...handle }: TransactionHandle,
    partitions: OpenTransaction['partitions'],
  ) {
    this.handle = handle;
    this.firstRecord = firstRecord;
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    for (const { topic, partition, nextSequence } of partitions) {
      this.sequences.set(partitionId(topic, partition), { topic, partition, next: nextSequence });
    }
  }

  /**
   * Initialises the transactional id and opens a new transaction under it. Whatever
   * transaction was open under the id is aborted by the broker and returned as `aborted`.
   */
  static async begin(
    options: TransactionalWriterOptions,
  ): Promise<{ writer: TransactionalWriter; aborted: AbortedTransaction | undefined }> {
    validate(options);
    const connection = options.connection ?? new ClusterConnection(options);
    try {
      const cluster = await connection.ready();
      const { transactionalId, transactionTimeoutMs } = options;
      const previous = options.reportAborted ? await describeTransaction(cluster, transactionalId) : undefined;
      const { producerId, producerEpoch } = await withTransactionCoordinator(cluster, transactionalId, (coordinator) =>
        coordinator.initProducerId({ transactionalId, transactionTimeout: transactionTimeoutMs }),
      ).catch((error: unknown) => {
        if (kafkaErrorCode(error) === ErrorCode.INVALID_TRANSACTION_TIMEOUT) {
          throw new Error(
            `The broker refused transaction timeout ${transactionTimeoutMs} ms for "${transactionalId}": it exceeds ` +
              `the broker's transaction.max.timeout.ms. Lower the sink's transaction timeout or raise the broker's limit.`,
          );
        }
        throw error;
      });
      const aborted =
        previous && (previous.state === 'Ongoing' || previous.state === 'PrepareAbort')
          ? {
              producerId: previous.producerId,
              producerEpoch: previous.producerEpoch,
              state: previous.state,
              partitions: previous.partitions,
            }
          : undefined;
      const writer = new TransactionalWriter(connection, cluster, options, { transactionalId, producerId, producerEpoch }, []);
      return { writer, aborted };
    } catch (error) {
      if (!options.connection) await connection.close();
      throw error;
    }
  }

  /**
   * Continues a transaction that another writer (in any process) opened and described with
   * {@link TransactionalWriter.openTransaction}. That writer must not write again.
   */
  static async resume(options: TransactionalWriterOptions, open: OpenTransaction): Promise<TransactionalWriter> {
    validate(options);
    if (open.handle.transactionalId !== options.transactionalId) {
      throw new Error(
        `Cannot resume transaction of "${open.handle.transactionalId}" with a writer for "${options.transactionalId}"`,
      );
    }
    const connection = options.connection ?? new ClusterConnection(options);
    return new TransactionalWriter(connection, await connection.ready(), options, open.handle, open.partitions);
  }

  /**
   * Writes the records into the transaction and resolves once every broker has
   * acknowledged them (acks=all). Calls are applied in order.
   */
  write(records: readonly OutputRecord[]): Promise<void> {
    const next = this.writing.then(() => this.writeNow(records));
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** The handle and sequence numbers, for persisting beside the writer's progress. */
  openTransaction(): OpenTransaction {
    return {
      handle: this.withFirstRecord(),
      partitions: [...this.sequences.values()].map(({ topic, partition, next }) => ({
        topic,
        partition,
        nextSequence: next,
      })),
    };
  }

  /**
   * Waits for every write to be acknowledged and returns the handle, leaving the
   * transaction open for a committer. Fails if any write failed: such a transaction must be
   * aborted, never committed.
   */
  async preCommit(): Promise<TransactionHandle> {
    await this.writing;
    if (this.failure) throw this.failure;
    return this.withFirstRecord();
  }

  private withFirstRecord(): TransactionHandle {
    return this.firstRecord ? { ...this.handle, firstRecord: this.firstRecord } : this.handle;
  }

  async close(): Promise<void> {
    await this.writing;
    if (!this.options.connection) await this.connection.close();
  }

  private async writeNow(records: readonly OutputRecord[]): Promise<void> {
    if (this.failure) throw this.failure;
    try {
      const batches = await this.assign(records);
      await this.addPartitions(batches);
      await this.produce(batches);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      throw this.failure;
    }
  }

  /** Groups records by partition, in order, and cuts them into batches with their sequence numbers. */
  private async assign(records: readonly OutputRecord[]): Promise<PartitionBatch[]> {
    const topics = [...new Set(records.map((record) => record.topic))];
    await this.cluster.addMultipleTargetTopics(topics);
    const byPartition = new Map<string, { topic: string; partition: number; messages: Message[] }>();
    for (const record of records) {
      const partitionMetadata = this.cluster.findTopicPartitionMetadata(record.topic);
      const message = toKafkaMessage(record);
      const partition = record.partition ?? this.partitioner({ topic: record.topic, partitionMetadata, message });
      if (!partitionMetadata.some((p) => p.partitionId === partition)) {
        throw new Error(`Topic "${record.topic}" has no partition ${partition} (it has ${partitionMetadata.length})`);
      }
      const id = partitionId(record.topic, partition);
      let entry = byPartition.get(id);
      if (!entry) byPartition.set(id, (entry = { topic: record.topic, partition, messages: [] }));
      entry.messages.push(message);
    }
    const batches: PartitionBatch[] = [];
    for (const [id, { topic, partition, messages }] of byPartition) {
      let sequence = this.sequences.get(id)?.next ?? 0;
      let start = 0;
      let bytes = 0;
      const cut = (end: number) => {
        batches.push({ topic, partition, firstSequence: sequence, messages: messages.slice(start, end) });
        sequence = (sequence + end - start) % MAX_SEQUENCE;
        start = end;
        bytes = 0;
      };
      messages.forEach((message, index) => {
        const size = estimatedSize(message);
        if (index > start && bytes + size > this.maxBatchBytes) cut(index);
        bytes += size;
      });
      cut(messages.length);
    }
    return batches;
  }

  private async addPartitions(batches: readonly PartitionBatch[]): Promise<void> {
    const added = new Map<string, { topic: string; partition: number }>();
    for (const { topic, partition } of batches) {
      const id = partitionId(topic, partition);
      if (!this.sequences.has(id)) added.set(id, { topic, partition });
    }
    if (added.size === 0) return;
    const topics = new Map<string, number[]>();
    for (const { topic, partition } of added.values()) topics.set(topic, [...(topics.get(topic) ?? []), partition]);
    await this.lostOnFencing(() =>
      withTransactionCoordinator(this.cluster, this.handle.transactionalId, (coordinator) =>
        coordinator.addPartitionsToTxn({
          ...this.handle,
          topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
        }),
      ),
    );
    for (const [id, { topic, partition }] of added) this.sequences.set(id, { topic, partition, next: 0 });
  }

  /**
   * Sends the batches: one request at a time per leader, leaders in parallel. A request that
   * fails with a retriable error is sent again with the same sequence numbers, which the
   * broker deduplicates, so a resend never writes a record twice.
   */
  private async produce(batches: readonly PartitionBatch[]): Promise<void> {
    const byLeader = new Map<number, PartitionBatch[][]>();
    const queued = new Map<string, number>();
    for (const batch of batches) {
      const leader = this.leaderOf(batch);
      const requests = byLeader.get(leader) ?? [];
      byLeader.set(leader, requests);
      // The n-th batch of a partition goes into the leader's n-th request, so that each
      // request holds at most one batch per partition and partitions stay in order.
      const id = partitionId(batch.topic, batch.partition);
      const index = queued.get(id) ?? 0;
      queued.set(id, index + 1);
      (requests[index] ??= []).push(batch);
    }
    await Promise.all(
      [...byLeader].map(async ([leader, requests]) => {
        for (const request of requests) await this.send(leader, request);
      }),
    );
    for (const batch of batches) {
      const entry = this.sequences.get(partitionId(batch.topic, batch.partition));
      if (entry) entry.next = (batch.firstSequence + batch.messages.length) % MAX_SEQUENCE;
    }
  }

  private leaderOf({ topic, partition }: { topic: string; partition: number }): number {
    const leader = this.cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === partition)?.leader;
    if (leader === undefined) throw new Error(`No leader known for ${topic}-${partition}`);
    return leader;
  }

  private async send(leader: number, batches: readonly PartitionBatch[]): Promise<void> {
    const deadline = Date.now() + RESEND_DEADLINE_MS;
    let target = leader;
    for (let attempt = 0; ; attempt++) {
      try {
        const broker = await this.cluster.findBroker({ nodeId: target });
        const response = await this.lostOnFencing(() =>
          broker.produce({
            ...this.handle,
            acks: -1,
            timeout: this.options.requestTimeoutMs ?? 30_000,
            topicData: topicData(batches),
          }),
        );
        this.firstRecord ??= firstRecordOf(response);
        return;
      } catch (error) {
        const retriable = (error as { retriable?: unknown }).retriable === true;
        if (!retriable || Date.now() > deadline || error instanceof TransactionLostError) {
          const where = batches.map((b) => `${b.topic}-${b.partition}`).join(', ');
          throw error instanceof TransactionLostError
            ? error
            : new Error(`Producing to ${where} in transaction "${this.handle.transactionalId}" failed: ${String(error)}`, {
                cause: error,
              });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1_000)));
        await this.cluster.refreshMetadata();
        // All batches of one request share a leader; after a leader change they may not, and
        // then they are sent one partition at a time to wherever each now lives.
        const leaders = new Set(batches.map((batch) => this.leaderOf(batch)));
        if (leaders.size > 1) {
          for (const batch of batches) await this.send(this.leaderOf(batch), [batch]);
          return;
        }
        target = [...leaders][0] ?? leader;
      }
    }
  }

  private async lostOnFencing<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      const code = transactionLostCode(error);
      if (code !== undefined) {
        throw new TransactionLostError(this.handle, `the broker refused a write with error code ${code} (aborted or fenced)`);
      }
      throw error;
    }
  }
}

function firstRecordOf(response: Awaited<ReturnType<Broker['produce']>>): RecordPosition | undefined {
  for (const { topicName, partitions } of response.topics) {
    for (const { partition, baseOffset } of partitions) {
      if (Number(baseOffset) >= 0) return { topic: topicName, partition, offset: Number(baseOffset) };
    }
  }
  return undefined;
}

function topicData(batches: readonly PartitionBatch[]) {
  const topics = new Map<string, ProducePartitionData[]>();
  for (const { topic, partition, firstSequence, messages } of batches) {
    const partitions = topics.get(topic) ?? [];
    topics.set(topic, partitions);
    partitions.push({
      partition,
      firstSequence,
      messages: messages.map((m) => ({
        key: m.key,
        value: m.value,
        ...(m.headers ? { headers: m.headers } : {}),
        ...(m.timestamp === undefined ? {} : { timestamp: Number(m.timestamp) }),
      })),
    });
  }
  return [...topics].map(([topic, partitions]) => ({ topic, partitions }));
}

function validate({ transactionalId, transactionTimeoutMs }: TransactionalWriterOptions): void {
  if (transactionalId.trim() === '') throw new Error('A transactional writer needs a non-empty transactionalId');
  if (!Number.isInteger(transactionTimeoutMs) || transactionTimeoutMs <= 0) {
    throw new Error(`transactionTimeoutMs must be a positive whole number of milliseconds, not ${transactionTimeoutMs}`);
  }
}
