import type { MSKEvent } from 'aws-lambda';
import { KafkaAdmin } from '../kafka/admin.js';
import { ClusterConnection, type KafkaConnectionOptions } from '../kafka/connection.js';
import { commitGroupOffsets } from '../kafka/transaction-coordinator.js';
import { CommittedRangeReader } from '../kafka/range-reader.js';
import type { KafkaRecord } from '../kafka/records.js';
import { mskEvent } from './msk-event.js';

export interface EventSourceMappingOptions {
  readonly kafka: KafkaConnectionOptions;
  readonly topic: string;
  readonly partitions: readonly number[];
  /** The consumer group whose offsets the mapping commits after each successful invocation. */
  readonly groupId: string;
  /** Records per event, at most (Lambda: 1 to 10,000; default 100). */
  readonly batchSize?: number;
  /** How long to gather records before invoking with fewer than `batchSize` (Lambda: MaximumBatchingWindowInSeconds; default 500 ms). */
  readonly batchWindowMs?: number;
  /** Where a group without offsets starts: the oldest record, or the end of the log. */
  readonly startingPosition?: 'TRIM_HORIZON' | 'LATEST';
  readonly eventSourceArn?: string;
  /** The function: a rejection makes the mapping retry the same batch, whole, until it succeeds. */
  readonly handler: (event: MSKEvent) => Promise<unknown>;
  /** Told of each failed attempt, before the retry. */
  readonly onError?: (error: unknown, partition: number, attempt: number) => void;
  readonly onBatch?: (partition: number, records: number, result: unknown) => void;
}

/** Lambda's limit on an event's payload. */
const MAX_EVENT_BYTES = 6 * 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Amazon MSK's event source mapping, emulated for offline mode: one poller per partition;
 * each partition's records delivered in order, one batch at a time; a batch closes at
 * `batchSize` records, at 6 MB, or when the batching window has passed; the handler gets an
 * MSK event (base64 keys and values); a failed batch is retried whole, and the consumer
 * group's offset is committed only after the handler succeeded.
 */
export class EventSourceMapping {
  private readonly reader: CommittedRangeReader;
  private readonly admin: KafkaAdmin;
  private readonly connection: ClusterConnection;
  private stopped = false;
  private pollers: Promise<void>[] = [];

  constructor(private readonly options: EventSourceMappingOptions) {
    this.reader = new CommittedRangeReader(options.kafka);
    this.admin = new KafkaAdmin(options.kafka);
    this.connection = new ClusterConnection(options.kafka);
  }

  async start(): Promise<void> {
    const { groupId, topic } = this.options;
    const committed = await this.admin.groupOffsets(groupId, topic);
    const [description] = await this.admin.describeTopics([topic]);
    const start = (partition: number) => {
      const offset = committed.get(partition) ?? -1;
      if (offset >= 0) return offset;
      const bounds = description?.partitions.find((p) => p.partition === partition);
      return Number(this.options.startingPosition === 'LATEST' ? (bounds?.stable ?? 0) : (bounds?.low ?? 0));
    };
    this.pollers = this.options.partitions.map((partition) => this.poll(partition, start(partition)));
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  /** Stops polling once the batches being processed are done (and committed). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.pollers);
    await this.reader.close();
    await this.admin.close();
    await this.connection.close();
  }

  private async poll(partition: number, from: number): Promise<void> {
    const { topic, batchSize = 100, batchWindowMs = 500 } = this.options;
    let position = from;
    while (!this.isStopped()) {
      const records: KafkaRecord[] = [];
      let bytes = 0;
      let next = position;
      const windowEnds = Date.now() + batchWindowMs;
      while (!this.isStopped() && records.length < batchSize && bytes < MAX_EVENT_BYTES / 2 && Date.now() < windowEnds) {
        const polled = await this.reader.readAvailable(topic, partition, next, batchSize - records.length);
        for (const record of polled.records) bytes += (record.key?.length ?? 0) + (record.value?.length ?? 0);
        records.push(...polled.records);
        next = polled.next;
        if (polled.records.length === 0) await sleep(Math.min(50, Math.max(0, windowEnds - Date.now())));
      }
      if (records.length === 0) {
        position = next;
        continue;
      }
      // Stopped while the batch kept failing: nothing is committed, the next start delivers it again.
      if (!(await this.invokeUntilSuccess(partition, records))) return;
      await commitGroupOffsets(await this.connection.ready(), this.options.groupId, topic, new Map([[partition, next]]));
      position = next;
    }
  }

  private async invokeUntilSuccess(partition: number, records: KafkaRecord[]): Promise<boolean> {
    const event = mskEvent(records, this.options.eventSourceArn ?? 'arn:aws:kafka:local:000000000000:cluster/sluice-offline/local', this.options.kafka.brokers);
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.options.handler(event);
        this.options.onBatch?.(partition, records.length, result);
        return true;
      } catch (error) {
        this.options.onError?.(error, partition, attempt);
        if (this.stopped) return false;
        // Lambda retries a failed batch until it succeeds (or the records expire).
        await sleep(Math.min(100 * 2 ** Math.min(attempt, 8), 10_000));
      }
    }
  }
}
