/**
 * A record as Sluice reads it from Kafka, whichever way it arrived: a Lambda event, a
 * ranged read, or the offline event-source emulation. Offsets are JavaScript numbers:
 * exact up to 2^53, far beyond any partition's lifetime.
 */
export interface KafkaRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
  readonly timestampType: TimestampType;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In the order the producer wrote them; a key may repeat. */
  readonly headers: readonly RecordHeader[];
}

export type TimestampType = 'CREATE_TIME' | 'LOG_APPEND_TIME';

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

/** A record to write. Without a partition, the key picks one (murmur2, as Kafka's Java client does). */
export interface OutputRecord {
  readonly topic: string;
  readonly partition?: number;
  readonly key?: Buffer | string | null;
  readonly value: Buffer | string | null;
  readonly headers?: readonly { readonly key: string; readonly value: Buffer | string }[];
  /** Milliseconds since the epoch; the broker's time when absent. */
  readonly timestamp?: number;
}

/** Kafka's default `max.message.bytes` (and brokers' `message.max.bytes`): 1 MiB and 12 bytes. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;
