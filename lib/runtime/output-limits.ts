import type { TopicWriteLimits } from '../kafka/admin.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../kafka/records.js';
import type { TopicAdmin } from '../kafka/clients.js';
import type { OutputRecord } from '../kafka/records.js';

/**
 * How close to its deletion a record may be written: the broker looks for expired segments
 * every `log.retention.check.interval.ms` (5 minutes by default), so a record within that of
 * its retention may be gone before anyone reads it. Twice that, to be safe.
 */
export const RETENTION_MARGIN_MS = 10 * 60_000;

export type TimestampProblem = 'deleted by retention' | 'too far in the past' | 'too far in the future';

const FIXES: Record<TimestampProblem, (policy: TopicWriteLimits) => string> = {
  'deleted by retention': (policy) =>
    `the topic deletes records older than its retention.ms of ${duration(policy.retentionMs)} within minutes, so this ` +
    `output would be lost once committed. Fix it one of these ways: stamp output with the time it is written ` +
    `(KafkaRecordSerializationSchema.builder()...setRecordTimestamp(RecordTimestamp.WRITE_TIME)); raise the topic's ` +
    `retention.ms (-1 keeps records whatever their age); or set its message.timestamp.type to LogAppendTime`,
  'too far in the past': (policy) =>
    `the broker refuses records more than message.timestamp.before.max.ms (${duration(policy.maxPastMs)}) older than its clock. ` +
    `Fix it one of these ways: setRecordTimestamp(RecordTimestamp.WRITE_TIME) on the sink's serializer, or raise ` +
    `the topic's message.timestamp.before.max.ms`,
  'too far in the future': (policy) =>
    `the broker refuses records more than message.timestamp.after.max.ms (${duration(policy.maxFutureMs)}) ahead of its clock. ` +
    `Fix it one of these ways: setRecordTimestamp(RecordTimestamp.WRITE_TIME) on the sink's serializer, or raise ` +
    `the topic's message.timestamp.after.max.ms`,
};

/** An output record that its topic would delete at once or refuse: its batch fails, and is retried once the topic or the pipeline is fixed. */
export class RecordTimestampError extends Error {
  override readonly name = 'RecordTimestampError';

  constructor(
    readonly record: OutputRecord,
    readonly policy: TopicWriteLimits,
    readonly problem: TimestampProblem,
    origin: string,
  ) {
    const key = record.key === undefined || record.key === null ? 'no key' : `key ${JSON.stringify(record.key.toString())}`;
    super(
      `An output record for ${record.topic} (${key}) has the timestamp ${new Date(record.timestamp ?? 0).toISOString()}, and ` +
        `${FIXES[problem](policy)}. It came from ${origin}; the batch fails and is retried, so nothing is lost or written.`,
    );
  }
}

function duration(ms: number): string {
  const days = ms / 86_400_000;
  if (Number.isInteger(days) && days > 0) return `${days} day${days === 1 ? '' : 's'} (${ms} ms)`;
  const hours = ms / 3_600_000;
  if (Number.isInteger(hours) && hours > 0) return `${hours} h (${ms} ms)`;
  return `${ms} ms`;
}

function problemOf(policy: TopicWriteLimits, timestamp: number, now: number): TimestampProblem | undefined {
  if (policy.timestampType === 'LOG_APPEND_TIME') return undefined;
  if (timestamp > now + policy.maxFutureMs) return 'too far in the future';
  if (timestamp < now - policy.maxPastMs) return 'too far in the past';
  if (policy.retentionMs >= 0 && timestamp < now - policy.retentionMs + RETENTION_MARGIN_MS) return 'deleted by retention';
  return undefined;
}

/**
 * Room a record needs in a record batch beyond its key, value and headers: the batch's header
 * (61 bytes) and the record's own lengths, deltas and attributes, rounded up.
 */
const RECORD_OVERHEAD_BYTES = 128;

/** How many bytes a text takes, exactly or at most. */
interface TextMeasure {
  readonly text: (text: string) => number;
  readonly headerKey: (key: string) => number;
}

const EXACT: TextMeasure = { text: (text) => Buffer.byteLength(text), headerKey: (key) => key.length };

// A UTF-16 code unit takes at most 3 bytes in UTF-8.
const AT_MOST: TextMeasure = { text: (text) => text.length * 3, headerKey: (key) => key.length * 3 };

/** What a record takes of its topic's `max.message.bytes`, near enough. */
function recordBytes(record: OutputRecord): number {
  return sizeOf(record, EXACT);
}

/**
 * The record's size when it is over `limit`, else undefined; most records are judged by an upper
 * bound, without counting UTF-8 bytes. This runs for every output record: it creates no function
 * per call (the bundle keeps function names, which costs a property definition per closure).
 */
export function bytesOverLimit(record: OutputRecord, limit: number): number | undefined {
  if (sizeOf(record, AT_MOST) <= limit) return undefined;
  const bytes = recordBytes(record);
  return bytes > limit ? bytes : undefined;
}

function sizeOf(record: OutputRecord, measure: TextMeasure): number {
  let bytes = RECORD_OVERHEAD_BYTES + lengthOf(record.key, measure) + lengthOf(record.value, measure);
  for (const header of record.headers ?? []) bytes += measure.headerKey(header.key) + lengthOf(header.value, measure);
  return bytes;
}

function lengthOf(bytes: Buffer | string | null | undefined, measure: TextMeasure): number {
  return typeof bytes === 'string' ? measure.text(bytes) : (bytes?.length ?? 0);
}

/** An output record larger than its topic takes: it fails the input record that produced it, under the bad-record policy. */
export class RecordTooLargeError extends Error {
  override readonly name = 'RecordTooLargeError';

  constructor(
    readonly topic: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `an output record for ${topic} takes ${bytes} bytes, more than the topic's max.message.bytes of ${limit}: ` +
        `make the record smaller, or raise max.message.bytes on the topic (and message.max.bytes on the brokers)`,
    );
  }
}

/**
 * The limits of the topics a stage writes: record sizes while it processes, and timestamps
 * against retention before it writes. Each topic's configuration is read once per container;
 * it is read again before a batch fails on a timestamp, so that a topic fixed meanwhile lets
 * the retry through.
 */
export class OutputLimits {
  private readonly policies = new Map<string, TopicWriteLimits>();

  constructor(
    private readonly admin: TopicAdmin,
    /** The broker's clock, near enough: the wall clock, not the pipeline's processing time. */
    private readonly wallClock: () => number,
  ) {}

  /** Reads the limits of the topics not read yet. */
  async prepare(topics: readonly string[]): Promise<void> {
    await this.load(topics.filter((topic) => !this.policies.has(topic)));
  }

  /** The largest record `topic` takes: Kafka's default for a topic not prepared (one a sink picks per element). */
  maxRecordBytes(topic: string): number {
    return this.policies.get(topic)?.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** Throws {@link RecordTimestampError} for the first record its topic would delete at once or refuse. */
  async checkTimestamps(records: readonly OutputRecord[], origin: string): Promise<void> {
    const stamped = records.filter((record) => record.timestamp !== undefined);
    if (stamped.length === 0) return;
    await this.prepare([...new Set(stamped.map((record) => record.topic))]);
    let found = this.firstProblem(stamped);
    if (!found) return;
    await this.load([found.record.topic]);
    found = this.firstProblem(stamped);
    if (found) throw new RecordTimestampError(found.record, found.policy, found.problem, origin);
  }

  private async load(topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return;
    for (const policy of await this.admin.writeLimits(topics)) this.policies.set(policy.topic, policy);
  }

  private firstProblem(records: readonly OutputRecord[]) {
    const now = this.wallClock();
    for (const record of records) {
      const policy = this.policies.get(record.topic);
      const problem = policy && problemOf(policy, record.timestamp ?? now, now);
      if (policy && problem) return { record, policy, problem };
    }
    return undefined;
  }
}
