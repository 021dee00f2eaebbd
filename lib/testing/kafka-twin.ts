import type { KafkaClients, TransactionOptions, TransactionWriter } from '../kafka/clients.js';
import { writeLimitsOf } from '../kafka/admin.js';
import type { AbortOutcome, CommitOutcome } from '../kafka/committer.js';
import type { TransactionDescription, TransactionStateName } from '../kafka/describe-transactions.js';
import { MissingTopicsError, TransactionAlreadyCommittedError, TransactionLostError } from '../kafka/errors.js';
import { partitionForKey } from '../kafka/partitioning.js';
import { RangeReadError, type OffsetRange } from '../kafka/range-reader.js';
import type { KafkaRecord, OutputRecord } from '../kafka/records.js';
import { transactionKey, type RecordPosition, type TransactionHandle } from '../kafka/transaction-handle.js';
import type { RecordWriter } from '../kafka/writer.js';

/**
 * Where a twin's requests meet the world: the simulation's scheduler decides when each one
 * is answered (and whether its caller crashes first); by default they are answered at once.
 */
export interface TwinIo {
  call<T>(operation: string, apply: () => T | Promise<T>): Promise<T>;
  /** A fetch that found nothing readable waits this way before it asks again. */
  idle(): Promise<void>;
  /**
   * Work the broker does after it has answered, on its own: the markers of a commit. It must
   * happen (a broker retries it until it does), but later, while the world goes on.
   */
  background(operation: string, apply: () => void): void;
}

/** Every request answered at once, and the broker's own work done before its caller goes on. */
export const immediateIo: TwinIo = {
  call: async (_operation, apply) => apply(),
  idle: () => new Promise((resolve) => setTimeout(resolve, 10)),
  background: (_operation, apply) => queueMicrotask(apply),
};

export interface KafkaTwinOptions {
  /** The broker's clock: record timestamps it assigns and transaction timeouts. Default Date.now. */
  readonly clock?: () => number;
  readonly io?: TwinIo;
  /** The highest producer epoch before a transactional id gets a new producer id (Kafka: 32767). */
  readonly maxProducerEpoch?: number;
  /** How long a range read waits for an open transaction to end (as RangeReaderOptions.waitTimeoutMs). Default 60 s. */
  readonly readWaitTimeoutMs?: number;
}

type Outcome = 'ongoing' | 'committed' | 'aborted';

interface Transaction {
  outcome: Outcome;
  readonly partitions: Set<string>;
  readonly startedAt: number;
}

interface DataEntry {
  readonly kind: 'data';
  readonly record: Omit<KafkaRecord, 'topic' | 'partition' | 'offset'>;
  readonly transaction: Transaction | undefined;
}

/** A transaction marker: it takes an offset, as on the broker, and is never returned. */
interface MarkerEntry {
  readonly kind: 'marker';
  readonly transaction: Transaction;
}

/** One entry of a partition's aborted-transaction index, as the broker keeps it for read_committed fetches. */
export interface AbortedTransaction {
  /** The offset of the transaction's first record in the partition. */
  readonly firstOffset: number;
  /** The offset of its abort marker. */
  readonly markerOffset: number;
}

type LogEntry = DataEntry | MarkerEntry;

interface TransactionalIdState {
  producerId: number;
  producerEpoch: number;
  state: TransactionStateName;
  timeoutMs: number;
  current: Transaction | undefined;
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function bytes(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/**
 * Kafka in memory, with the broker's transaction semantics as Sluice relies on them (and as
 * the contract suite checks against a real broker): producer ids and epochs; InitProducerId
 * aborting an open transaction and bumping the epoch, a new producer id once the epoch
 * overflows; EndTxn's outcomes (committed, already committed, fenced, invalid state);
 * transaction timeouts that abort and fence; markers that take offsets, a commit's written after
 * EndTxn has answered; the last stable offset and read_committed; consumer-group offsets. One
 * broker, no replication.
 */
export class KafkaTwin implements KafkaClients {
  private readonly logs = new Map<string, LogEntry[]>();
  private readonly partitionCounts = new Map<string, number>();
  private readonly topicConfigs = new Map<string, Readonly<Record<string, string>>>();
  private readonly transactionalIds = new Map<string, TransactionalIdState>();
  private readonly groups = new Map<string, Map<string, number>>();
  /** The transactions an EndTxn(abort) ended, by {@link transactionKey}: not a timeout, nor a newer producer's InitProducerId. */
  private readonly abortedByRequest = new Set<string>();
  /** Called as a commit request ends an open transaction, before its markers go out: for checks that hold at that moment. */
  onCommitRequested: (handle: TransactionHandle) => void = () => undefined;
  private nextProducerId = 1_000;
  private readonly clock: () => number;
  private readonly io: TwinIo;
  private readonly maxProducerEpoch: number;
  private readonly readWaitTimeoutMs: number;

  constructor(options: KafkaTwinOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.io = options.io ?? immediateIo;
    this.maxProducerEpoch = options.maxProducerEpoch ?? 32_767;
    this.readWaitTimeoutMs = options.readWaitTimeoutMs ?? 60_000;
  }

  // ---- set-up and inspection, outside the port ----

  /** A topic; `configs` as Kafka's topic-level configuration (what it leaves out keeps every record). */
  createTopic(topic: string, partitions: number, configs: Readonly<Record<string, string>> = {}): void {
    if (this.partitionCounts.has(topic)) return;
    this.partitionCounts.set(topic, partitions);
    this.topicConfigs.set(topic, configs);
    for (let partition = 0; partition < partitions; partition++) this.logs.set(partitionKey(topic, partition), []);
  }

  /** Grows a topic to `partitions`, as Kafka's CreatePartitions does: the new ones start empty, keys now spread over all. */
  addPartitions(topic: string, partitions: number): void {
    const before = this.partitions(topic);
    if (partitions <= before) throw new Error(`Topic "${topic}" has ${before} partitions already; a topic only grows`);
    this.partitionCounts.set(topic, partitions);
    for (let partition = before; partition < partitions; partition++) this.logs.set(partitionKey(topic, partition), []);
  }

  /** Appends records without a transaction (a producer with acks=all); returns their offsets. */
  append(records: readonly OutputRecord[]): number[] {
    return records.map((record) => this.appendData(record, undefined).offset);
  }

  /** Every committed data record of the topic, partition by partition: what a read_committed consumer reads. */
  committedRecords(topic: string): KafkaRecord[] {
    this.expireTransactions();
    const records: KafkaRecord[] = [];
    for (let partition = 0; partition < this.partitions(topic); partition++) {
      records.push(...this.committedBetween(topic, partition, 0, this.lastStableOffset(topic, partition)));
    }
    return records;
  }

  /**
   * The partition's aborted transactions in the order of their markers, as the broker's index
   * lists them: two nest when one begins before the other and ends after it.
   */
  abortedTransactions(topic: string, partition: number): AbortedTransaction[] {
    this.expireTransactions();
    const firstOffsets = new Map<Transaction, number>();
    const aborted: AbortedTransaction[] = [];
    for (const [offset, entry] of this.log(topic, partition).entries()) {
      if (entry.kind === 'data' && entry.transaction && !firstOffsets.has(entry.transaction)) firstOffsets.set(entry.transaction, offset);
      if (entry.kind === 'marker' && entry.transaction.outcome === 'aborted') {
        aborted.push({ firstOffset: firstOffsets.get(entry.transaction) ?? offset, markerOffset: offset });
      }
    }
    return aborted;
  }

  /** Whether an EndTxn(abort) for this handle ended its transaction: for the simulation's invariants. */
  wasAbortedByRequest(handle: TransactionHandle): boolean {
    return this.abortedByRequest.has(transactionKey(handle));
  }

  /** Transactional ids whose transaction is still open, after expiring those past their timeout. */
  openTransactions(): string[] {
    this.expireTransactions();
    return [...this.transactionalIds].filter(([, state]) => state.state === 'Ongoing').map(([id]) => id);
  }

  commitGroupOffset(groupId: string, topic: string, partition: number, offset: number): void {
    let group = this.groups.get(groupId);
    if (!group) this.groups.set(groupId, (group = new Map<string, number>()));
    group.set(partitionKey(topic, partition), offset);
  }

  highWatermark(topic: string, partition: number): number {
    return this.log(topic, partition).length;
  }

  // ---- the port ----

  readonly admin: KafkaClients['admin'] = {
    listTopics: () => this.io.call('Metadata', () => [...this.partitionCounts.keys()].sort()),
    describeTopics: (topics) =>
      this.io.call('ListOffsets', () => {
        const missing = this.missingTopics(topics);
        if (missing) throw missing;
        this.expireTransactions();
        return topics.map((topic) => ({
          topic,
          partitions: Array.from({ length: this.partitions(topic) }, (_, partition) => ({
            partition,
            leader: 0,
            replicas: [0],
            low: '0',
            stable: String(this.lastStableOffset(topic, partition)),
          })),
        }));
      }),
    groupOffsets: (groupId, topic) =>
      this.io.call('OffsetFetch', () => {
        const group = this.groups.get(groupId);
        return new Map<number, number>(
          Array.from({ length: this.partitions(topic) }, (_, partition) => [partition, group?.get(partitionKey(topic, partition)) ?? -1]),
        );
      }),
    // Answered at once rather than as a request of the schedule: a processor reads these once
    // per container, and as a request it would only shift every schedule's draws (and the
    // seeds docs/PROTOCOL.md names) without reaching an interleaving that matters.
    writeLimits: (topics) => {
      const missing = this.missingTopics(topics);
      if (missing) return Promise.reject(missing);
      return Promise.resolve(topics.map((topic) => writeLimitsOf(topic, this.topicConfigs.get(topic) ?? {})));
    },
    offsetsForTimestamp: (topic, timestamp) =>
      this.io.call('ListOffsets', () => {
        const result = new Map<number, number>();
        for (let partition = 0; partition < this.partitions(topic); partition++) {
          const offset = this.log(topic, partition).findIndex((entry) => entry.kind === 'data' && entry.record.timestamp >= timestamp);
          result.set(partition, offset);
        }
        return result;
      }),
  };

  readonly reader: KafkaClients['reader'] = {
    read: (range) => this.readRange(range),
    readAvailable: (topic, partition, from, maxRecords) =>
      this.io.call('Fetch', () => {
        this.expireTransactions();
        const stable = this.lastStableOffset(topic, partition);
        const records = this.committedBetween(topic, partition, from, stable).slice(0, maxRecords);
        const next = records.length === maxRecords ? (records.at(-1)?.offset ?? from) + 1 : Math.max(from, stable);
        return { records, next };
      }),
    logEnd: (topic, partition) => this.io.call('ListOffsets', () => this.highWatermark(topic, partition)),
  };

  readonly committer: KafkaClients['committer'] = {
    describe: (transactionalId) => this.io.call('DescribeTransactions', () => this.describe(transactionalId)),
    commit: (handle) => this.io.call('EndTxn', () => this.commitTransaction(handle)),
    abort: (handle) => this.io.call('EndTxn', () => this.endTransaction(handle, false) as AbortOutcome),
  };

  beginTransaction({ transactionalId, transactionTimeoutMs }: TransactionOptions): Promise<TransactionWriter> {
    if (transactionalId.trim() === '') throw new Error('A transactional writer needs a non-empty transactionalId');
    return this.io.call('InitProducerId', () => {
      this.expireTransactions();
      const handle = this.initProducerId(transactionalId, transactionTimeoutMs);
      return this.transactionWriter(handle);
    });
  }

  recordWriter(): RecordWriter {
    let pending: Promise<void> = Promise.resolve();
    let failure: Error | undefined;
    return {
      write: (records) => {
        pending = pending.then(() =>
          this.io.call('Produce', () => void this.append(records)).catch((error: unknown) => {
            failure ??= asError(error);
          }),
        );
        return Promise.resolve();
      },
      flush: async () => {
        await pending;
        if (failure !== undefined) throw failure;
      },
      close: () => pending,
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  // ---- the broker's behaviour ----

  /** What the broker's admin answers a request naming topics it does not host (lib/kafka/admin.ts), if it names any. */
  private missingTopics(topics: readonly string[]): MissingTopicsError | undefined {
    const missing = topics.filter((topic) => !this.partitionCounts.has(topic));
    return missing.length > 0 ? new MissingTopicsError(missing, undefined) : undefined;
  }

  private partitions(topic: string): number {
    const count = this.partitionCounts.get(topic);
    if (count === undefined) throw new Error(`This server does not host topic "${topic}" (UNKNOWN_TOPIC_OR_PARTITION)`);
    return count;
  }

  private log(topic: string, partition: number): LogEntry[] {
    const log = this.logs.get(partitionKey(topic, partition));
    if (!log) throw new Error(`Topic "${topic}" has no partition ${partition} (it has ${this.partitions(topic)})`);
    return log;
  }

  private appendData(record: OutputRecord, transaction: Transaction | undefined): RecordPosition {
    const partitions = this.partitions(record.topic);
    const key = bytes(record.key);
    const partition = record.partition ?? (key ? partitionForKey(key.toString('utf8'), partitions) : 0);
    const log = this.log(record.topic, partition);
    transaction?.partitions.add(partitionKey(record.topic, partition));
    log.push({
      kind: 'data',
      transaction,
      record: {
        timestamp: record.timestamp ?? this.clock(),
        timestampType: 'CREATE_TIME',
        key,
        value: bytes(record.value),
        headers: (record.headers ?? []).map((header) => ({ key: header.key, value: bytes(header.value) })),
      },
    });
    return { topic: record.topic, partition, offset: log.length - 1 };
  }

  /** The first offset of an open transaction's records, or the log's end: read_committed reads stop there. */
  private lastStableOffset(topic: string, partition: number): number {
    const log = this.log(topic, partition);
    const open = log.findIndex((entry) => entry.kind === 'data' && entry.transaction?.outcome === 'ongoing');
    return open === -1 ? log.length : open;
  }

  private committedBetween(topic: string, partition: number, from: number, to: number): KafkaRecord[] {
    const log = this.log(topic, partition);
    const records: KafkaRecord[] = [];
    for (let offset = Math.max(0, from); offset < Math.min(to, log.length); offset++) {
      const entry = log[offset];
      if (entry?.kind !== 'data') continue;
      if (entry.transaction && entry.transaction.outcome !== 'committed') continue;
      records.push({ topic, partition, offset, ...entry.record });
    }
    return records;
  }

  private async readRange(range: OffsetRange): Promise<KafkaRecord[]> {
    const { topic, partition, from, to } = range;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
      throw new Error(`Invalid offset range [${from}, ${to}) for ${topic}-${partition}`);
    }
    if (from === to) return [];
    const deadline = this.clock() + this.readWaitTimeoutMs;
    for (;;) {
      const read = await this.io.call('Fetch', () => {
        this.expireTransactions();
        const stable = this.lastStableOffset(topic, partition);
        const end = this.log(topic, partition).length;
        if (stable >= to) return this.committedBetween(topic, partition, from, to);
        if (end < to && stable >= end) throw new RangeReadError(range, stable, `the log ends at ${end}, before the range does`);
        if (this.clock() > deadline) {
          throw new RangeReadError(range, stable, `an open transaction holds the last stable offset at ${stable} for over ${this.readWaitTimeoutMs} ms`);
        }
        return undefined;
      });
      if (read) return read;
      await this.io.idle();
    }
  }

  private initProducerId(transactionalId: string, timeoutMs: number): TransactionHandle {
    const existing = this.transactionalIds.get(transactionalId);
    if (!existing) {
      const state: TransactionalIdState = { producerId: this.nextProducerId++, producerEpoch: 0, state: 'Empty', timeoutMs, current: undefined };
      this.transactionalIds.set(transactionalId, state);
      return this.handleOf(transactionalId, state);
    }
    // A broker answers CONCURRENT_TRANSACTIONS until a commit's markers are in, and the client retries.
    this.completeCommit(existing);
    if (existing.state === 'Ongoing') this.finish(existing, false);
    this.bumpEpoch(existing);
    existing.state = 'Empty';
    existing.timeoutMs = timeoutMs;
    return this.handleOf(transactionalId, existing);
  }

  private bumpEpoch(state: TransactionalIdState): void {
    if (state.producerEpoch >= this.maxProducerEpoch) {
      state.producerId = this.nextProducerId++;
      state.producerEpoch = 0;
    } else {
      state.producerEpoch++;
    }
  }

  private handleOf(transactionalId: string, state: TransactionalIdState): TransactionHandle {
    return { transactionalId, producerId: String(state.producerId), producerEpoch: state.producerEpoch };
  }

  /**
   * EndTxn(commit) as a broker answers it: the coordinator records the decision and answers,
   * and writes the markers afterwards. Until they are in, the transaction holds each partition's
   * last stable offset back, as an open one does.
   */
  private prepareCommit(state: TransactionalIdState): void {
    state.state = 'PrepareCommit';
    this.io.background('WriteTxnMarkers', () => this.completeCommit(state));
  }

  private completeCommit(state: TransactionalIdState): void {
    if (state.state === 'PrepareCommit') this.finish(state, true);
  }

  /** Writes the markers of the current transaction and records its outcome. */
  private finish(state: TransactionalIdState, commit: boolean): void {
    const transaction = state.current;
    if (transaction) {
      transaction.outcome = commit ? 'committed' : 'aborted';
      for (const id of transaction.partitions) this.logs.get(id)?.push({ kind: 'marker', transaction });
    }
    state.current = undefined;
    state.state = commit ? 'CompleteCommit' : 'CompleteAbort';
  }

  /** The coordinator aborts a transaction open past its timeout, and fences its producer with a new epoch. */
  private expireTransactions(): void {
    const now = this.clock();
    for (const state of this.transactionalIds.values()) {
      if (state.state === 'Ongoing' && state.current && now - state.current.startedAt > state.timeoutMs) {
        this.finish(state, false);
        this.bumpEpoch(state);
      }
    }
  }

  private describe(transactionalId: string): TransactionDescription | undefined {
    this.expireTransactions();
    const state = this.transactionalIds.get(transactionalId);
    if (!state) return undefined;
    const byTopic = new Map<string, number[]>();
    for (const id of state.current?.partitions ?? []) {
      const [topic = '', partition = '0'] = id.split('\u0000');
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), Number(partition)]);
    }
    return {
      errorCode: 0,
      transactionalId,
      state: state.state,
      timeoutMs: state.timeoutMs,
      startTimeMs: state.current?.startedAt ?? -1,
      producerId: String(state.producerId),
      producerEpoch: state.producerEpoch,
      partitions: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    };
  }

  /** KafkaCommitter.commit: a lost verdict stands only while the log does not show the transaction's first record committed. */
  private commitTransaction(handle: TransactionHandle): CommitOutcome {
    try {
      return this.endTransaction(handle, true) as CommitOutcome;
    } catch (error) {
      const first = handle.firstRecord;
      const committed = first && this.committedBetween(first.topic, first.partition, first.offset, first.offset + 1).length > 0;
      if (error instanceof TransactionLostError && committed) return 'already-committed';
      throw error;
    }
  }

  /** KafkaCommitter's outcomes, from the coordinator's state of the id (lib/kafka/committer.ts). */
  private endTransaction(handle: TransactionHandle, commit: boolean): CommitOutcome | AbortOutcome {
    this.expireTransactions();
    const state = this.transactionalIds.get(handle.transactionalId);
    const same = state && String(state.producerId) === handle.producerId && state.producerEpoch === handle.producerEpoch;
    if (!state || !same) {
      if (!commit) return 'superseded';
      throw new TransactionLostError(
        handle,
        state
          ? `the transactional id now belongs to producer ${state.producerId} epoch ${state.producerEpoch} (state ${state.state})`
          : 'the broker does not know the transactional id (never written, or expired)',
      );
    }
    switch (state.state) {
      case 'Empty':
        return 'empty';
      case 'Ongoing':
        if (commit) {
          this.onCommitRequested(handle);
          this.prepareCommit(state);
          return 'committed';
        }
        this.finish(state, false);
        this.abortedByRequest.add(transactionKey(handle));
        return 'aborted';
      // A broker answers CONCURRENT_TRANSACTIONS while the markers go out, and KafkaCommitter
      // retries until they are in: what it then answers, it answers here at once.
      case 'PrepareCommit':
      case 'CompleteCommit':
        if (!commit) throw new TransactionAlreadyCommittedError(handle);
        return 'already-committed';
      default:
        if (!commit) return 'already-aborted';
        throw new TransactionLostError(handle, `the broker has it in state ${state.state}`);
    }
  }

  private transactionWriter(handle: TransactionHandle): TransactionWriter {
    let writing: Promise<void> = Promise.resolve();
    let failure: Error | undefined;
    let firstRecord: RecordPosition | undefined;
    const write = (records: readonly OutputRecord[]) =>
      this.io.call('Produce', () => {
        this.expireTransactions();
        const state = this.transactionalIds.get(handle.transactionalId);
        const live =
          state &&
          String(state.producerId) === handle.producerId &&
          state.producerEpoch === handle.producerEpoch &&
          (state.state === 'Empty' || state.state === 'Ongoing');
        if (!state || !live) {
          throw new TransactionLostError(handle, 'the broker refused a write with error code 47 (aborted or fenced)');
        }
        if (state.state === 'Empty') {
          state.state = 'Ongoing';
          state.current = { outcome: 'ongoing', partitions: new Set(), startedAt: this.clock() };
        }
        for (const record of records) {
          const position = this.appendData(record, state.current);
          firstRecord ??= position;
        }
      });
    return {
      handle,
      write: (records) => {
        const next = writing.then(() => {
          if (failure !== undefined) throw failure;
          return write(records);
        });
        writing = next.catch((error: unknown) => {
          failure ??= asError(error);
        });
        return next;
      },
      preCommit: async () => {
        await writing;
        if (failure !== undefined) throw failure;
        return firstRecord ? { ...handle, firstRecord } : handle;
      },
      close: () => writing,
    };
  }
}
