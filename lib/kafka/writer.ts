import { Partitioners, type Producer } from 'kafkajs';
import { connectVerified, createKafkaClient, requestListener, type KafkaConnectionOptions } from './connection.js';
import { DeliveryGuarantee } from './delivery-guarantee.js';
import { toKafkaMessage } from './messages.js';
import type { OutputRecord } from './records.js';

/** Writes records without transactions: the NONE and AT_LEAST_ONCE delivery guarantees. */
export interface RecordWriter {
  /** Queues the records; they are written in call order. */
  write(records: readonly OutputRecord[]): Promise<void>;
  /** Resolves when everything written so far is done (acknowledged, for AT_LEAST_ONCE). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export type NonTransactionalGuarantee = Exclude<DeliveryGuarantee, typeof DeliveryGuarantee.EXACTLY_ONCE>;

const ACKS: Record<NonTransactionalGuarantee, number> = { NONE: 0, AT_LEAST_ONCE: -1 };

class ProducerWriter implements RecordWriter {
  private readonly producer: Producer;
  private connected: Promise<void> | undefined;
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly guarantee: NonTransactionalGuarantee,
    private readonly options: KafkaConnectionOptions,
  ) {
    const idempotent = guarantee === DeliveryGuarantee.AT_LEAST_ONCE;
    this.producer = createKafkaClient(options).producer({
      idempotent,
      maxInFlightRequests: idempotent ? 1 : undefined,
      allowAutoTopicCreation: false,
      // Kafka's own partitioner (murmur2), as Java clients use: restore relies on it.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    if (options.onRequest) this.producer.on(this.producer.events.REQUEST, requestListener(options.onRequest));
  }

  write(records: readonly OutputRecord[]): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const byTopic = new Map<string, ReturnType<typeof toKafkaMessage>[]>();
    for (const record of records) {
      const messages = byTopic.get(record.topic) ?? [];
      byTopic.set(record.topic, messages);
      messages.push(toKafkaMessage(record));
    }
    this.connected ??= connectVerified(this.options, () => this.producer.connect());
    const connected = this.connected;
    this.pending = this.pending.then(async () => {
      if (this.failure !== undefined) return;
      try {
        await connected;
        await this.producer.sendBatch({
          acks: ACKS[this.guarantee],
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        });
      } catch (error) {
        this.failure = error instanceof Error ? error : new Error(String(error));
      }
    });
    return Promise.resolve();
  }

  async flush(): Promise<void> {
    await this.pending;
    if (this.failure !== undefined) throw this.failure;
  }

  async close(): Promise<void> {
    await this.pending;
    if (this.connected) await this.producer.disconnect();
  }
}

/**
 * A writer for NONE (acks=0: nothing is awaited, records may be lost) or AT_LEAST_ONCE
 * (idempotent producer, acks=all; `flush` resolves only once every record is acknowledged).
 * EXACTLY_ONCE uses {@link TransactionalWriter} instead.
 */
export function createRecordWriter(guarantee: NonTransactionalGuarantee, options: KafkaConnectionOptions): RecordWriter {
  return new ProducerWriter(guarantee, options);
}
