import type Cluster from 'kafkajs/src/cluster/index.js';
import type { FetchedMessage, FetchPartitionResponse } from 'kafkajs/src/cluster/index.js';
import { ClusterConnection, type KafkaConnectionOptions } from './connection.js';
import { retryWhileRetriable } from './errors.js';
import { fromFetchedMessage } from './messages.js';
import type { KafkaRecord } from './records.js';

/** Offsets `from` (inclusive) to `to` (exclusive) of one partition. */
export interface OffsetRange {
  readonly topic: string;
  readonly partition: number;
  readonly from: number;
  readonly to: number;
}

export interface RangeReaderOptions extends KafkaConnectionOptions {
  /**
   * How long a read waits for the range to become readable: an open transaction holds the
   * last stable offset back until it ends. Default 60 s.
   */
  readonly waitTimeoutMs?: number;
  /** Bytes asked for per fetch. Default 4 MB. */
  readonly fetchMaxBytes?: number;
}

/** The range cannot be read completely; nothing of it is returned. */
export class RangeReadError extends Error {
  override readonly name = 'RangeReadError';

  constructor(
    readonly range: OffsetRange,
    readonly position: number,
    detail: string,
  ) {
    super(`Reading ${range.topic}-${range.partition} offsets [${range.from}, ${range.to}) stopped at ${position}: ${detail}`);
  }
}

/** The smallest fetch a bounded poll asks for: the broker returns a whole record batch past it anyway. */
const MIN_POLL_FETCH_BYTES = 16 * 1024;
/** How long a poll's read-ahead serves the next poll; after that it fetches again. */
const READ_AHEAD_MS = 5_000;
/** What a record takes in a fetch beyond its key and value: offsets, timestamps, lengths, headers' framing. */
const RECORD_OVERHEAD_BYTES = 70;

const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;
/** ListOffsets' timestamp for the latest offset. */
const LATEST = -1;
const ABORT_MARKER = 0;

/** The control record's type: 0 for an abort marker, 1 for a commit marker. */
function markerType(message: FetchedMessage): number | undefined {
  return message.key && message.key.length >= 4 ? message.key.readInt16BE(2) : undefined;
}

/**
 * The committed data records of a fetch: control records dropped, and the records of
 * aborted transactions dropped — from each aborted transaction's first offset up to its
 * producer's abort marker, as Kafka's Java consumer does.
 */
export function committedRecords(partition: FetchPartitionResponse): FetchedMessage[] {
  const aborted = [...partition.abortedTransactions].sort((a, b) => Number(a.firstOffset) - Number(b.firstOffset));
  const abortedProducers = new Set<string>();
  let next = 0;
  const result: FetchedMessage[] = [];
  for (const message of partition.messages) {
    const offset = Number(message.offset);
    while (next < aborted.length && Number(aborted[next]?.firstOffset) <= offset) {
      abortedProducers.add(String(aborted[next]?.producerId));
      next++;
    }
    const { producerId, inTransaction } = message.batchContext;
    if (message.isControlRecord) {
      if (markerType(message) === ABORT_MARKER) abortedProducers.delete(producerId);
    } else if (!(inTransaction && abortedProducers.has(producerId))) {
      result.push(message);
    }
  }
  return result;
}

/**
 * Reads offset ranges of a partition with read_committed isolation, straight from the
 * partition's leader and without a consumer group: Sluice uses it to fill gaps between
 * what a shard has processed and what its trigger delivered.
 */
export class CommittedRangeReader {
  private readonly connection: ClusterConnection;
  private readonly waitTimeoutMs: number;
  private readonly fetchMaxBytes: number;
  /** Bytes a record took in the latest poll of each partition, to size the next poll's fetch to what it keeps. */
  private readonly recordBytes = new Map<string, number>();
  /**
   * The committed records of each partition's latest poll that it did not return: the broker
   * sends whole record batches, so a poll of a hundred records gets a producer's thousands, and
   * the next poll from where it stopped takes them from here instead of fetching them again.
   */
  private readonly readAhead = new Map<string, { from: number; records: KafkaRecord[]; end: number; fetchedAt: number }>();

  constructor(options: RangeReaderOptions) {
    this.connection = new ClusterConnection(options);
    this.waitTimeoutMs = options.waitTimeoutMs ?? 60_000;
    this.fetchMaxBytes = options.fetchMaxBytes ?? 4 * 1024 * 1024;
  }

  /**
   * The committed records of the range, in offset order. Aborted records and transaction
   * markers occupy offsets but are not returned, so fewer than `to - from` records is normal.
   */
  async read(range: OffsetRange): Promise<KafkaRecord[]> {
    const { topic, partition, from, to } = range;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
      throw new Error(`Invalid offset range [${from}, ${to}) for ${topic}-${partition}`);
    }
    if (from === to) return [];
    const cluster = await this.connection.ready();
    await cluster.addTargetTopic(topic);
    const records: KafkaRecord[] = [];
    const deadline = Date.now() + this.waitTimeoutMs;
    let position = from;
    while (position < to) {
      const response = await this.fetch(cluster, range, position);
      const fetched = response.messages.filter((m) => Number(m.offset) >= position);
      if (fetched.length === 0) {
        const highWatermark = Number(response.highWatermark);
        const lastStable = Number(response.lastStableOffset);
        if (highWatermark < to && lastStable >= highWatermark) {
          throw new RangeReadError(range, position, `the log ends at ${highWatermark}, before the range does`);
        }
        if (Date.now() > deadline) {
          throw new RangeReadError(
            range,
            position,
            `an open transaction holds the last stable offset at ${lastStable} for over ${this.waitTimeoutMs} ms`,
          );
        }
        continue;
      }
      for (const message of committedRecords({ ...response, messages: fetched })) {
        if (Number(message.offset) < to) records.push(fromFetchedMessage(topic, partition, message));
      }
      position = Number(fetched[fetched.length - 1]?.offset) + 1;
    }
    return records;
  }

  /**
   * The committed records from `from` on that are readable now — up to the last stable
   * offset, at most `maxRecords` — and the offset to read next: what a read_committed
   * consumer's poll returns. Empty when nothing new is committed.
   */
  async readAvailable(
    topic: string,
    partition: number,
    from: number,
    maxRecords: number,
  ): Promise<{ records: KafkaRecord[]; next: number }> {
    const cluster = await this.connection.ready();
    await cluster.addTargetTopic(topic);
    const range = { topic, partition, from, to: Number.MAX_SAFE_INTEGER };
    const records: KafkaRecord[] = [];
    const partitionId = `${topic}\u0000${partition}`;
    let position = from;
    while (records.length < maxRecords) {
      let ahead = this.readAhead.get(partitionId);
      if (!ahead || ahead.from !== position || Date.now() - ahead.fetchedAt > READ_AHEAD_MS) {
        // A fetch of the full size decodes every record in it, to keep perhaps a hundred.
        const perRecord = this.recordBytes.get(partitionId);
        const wanted = maxRecords - records.length;
        const maxBytes =
          perRecord === undefined ? this.fetchMaxBytes : Math.min(this.fetchMaxBytes, Math.max(MIN_POLL_FETCH_BYTES, Math.ceil(wanted * perRecord * 1.25)));
        const response = await this.fetch(cluster, range, position, 0, maxBytes);
        const fetched = response.messages.filter(
          (m) => Number(m.offset) >= position && Number(m.offset) < Number(response.lastStableOffset),
        );
        if (fetched.length === 0) break;
        let bytes = 0;
        for (const message of fetched) bytes += (message.key?.length ?? 0) + (message.value?.length ?? 0) + RECORD_OVERHEAD_BYTES;
        this.recordBytes.set(partitionId, bytes / fetched.length);
        const committed = committedRecords({ ...response, messages: fetched }).map((message) => fromFetchedMessage(topic, partition, message));
        ahead = { from: position, records: committed, end: Number(fetched.at(-1)?.offset) + 1, fetchedAt: Date.now() };
      }
      const taken = ahead.records.slice(0, maxRecords - records.length);
      records.push(...taken);
      const rest = ahead.records.slice(taken.length);
      if (rest.length === 0) {
        position = ahead.end;
        this.readAhead.delete(partitionId);
      } else {
        position = (taken.at(-1)?.offset ?? position) + 1;
        this.readAhead.set(partitionId, { ...ahead, from: position, records: rest });
      }
    }
    return { records, next: position };
  }

  /**
   * The partition's log end offset (high watermark), from its leader: ListOffsets for the
   * latest offset under read_uncommitted, since under read_committed it answers the last
   * stable offset instead.
   */
  async logEnd(topic: string, partition: number): Promise<number> {
    const cluster = await this.connection.ready();
    await cluster.addTargetTopic(topic);
    return retryWhileRetriable(
      async () => {
        const broker = await this.leaderOf(cluster, topic, partition);
        const { responses } = await broker.listOffsets({
          isolationLevel: READ_UNCOMMITTED,
          topics: [{ topic, partitions: [{ partition, timestamp: LATEST }] }],
        });
        const answer = responses.find((r) => r.topic === topic)?.partitions.find((p) => p.partition === partition);
        if (!answer) throw new Error(`The leader of ${topic}-${partition} returned no offset for it`);
        return Number(answer.offset);
      },
      this.waitTimeoutMs,
      () => cluster.refreshMetadata(),
    );
  }

  private async leaderOf(cluster: Cluster, topic: string, partition: number) {
    const leader = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === partition)?.leader;
    if (leader === undefined) throw new Error(`Topic "${topic}" has no partition ${partition}`);
    return cluster.findBroker({ nodeId: leader });
  }

  /**
   * One fetch from the partition's leader. A retriable error — a leader moving, or a topic the
   * broker has not finished creating — refreshes metadata and tries again, for up to the
   * reader's wait timeout.
   */
  private async fetch(
    cluster: Cluster,
    { topic, partition }: OffsetRange,
    position: number,
    maxWaitMs = 200,
    maxBytes = this.fetchMaxBytes,
  ): Promise<FetchPartitionResponse> {
    return retryWhileRetriable(
      async () => {
        const broker = await this.leaderOf(cluster, topic, partition);
        const { responses } = await broker.fetch({
          isolationLevel: READ_COMMITTED,
          maxWaitTime: maxWaitMs,
          minBytes: 1,
          maxBytes,
          topics: [{ topic, partitions: [{ partition, fetchOffset: String(position), maxBytes }] }],
        });
        const response = responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
        if (!response) throw new Error(`The leader of ${topic}-${partition} returned no data for it`);
        return response;
      },
      this.waitTimeoutMs,
      () => cluster.refreshMetadata(),
    );
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
