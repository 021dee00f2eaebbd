import type { KafkaRecord } from '../kafka/records.js';
import { parseJson } from './record-contents.js';

/** Turns a Kafka record's value into an element (Flink's `DeserializationSchema<T>`). Throw to reject it. */
export interface DeserializationSchema<T> {
  deserialize(value: Buffer | null): T;
  /**
   * Whether `nextElement` ends its partition's stream, as in Flink: the element is not emitted,
   * the partition's later records are read past, and its watermark no longer holds the
   * stage's back (once every partition has ended, every event-time window fires). For bounded
   * reads: a test's input, a backfill that stops at a marker record.
   */
  isEndOfStream?(nextElement: T): boolean;
  /**
   * Fetches what `deserialize` will need for a batch's values (a registry's schemas), once per
   * batch before its first record is read. Throw to fail the batch, which is then retried: for
   * a cause outside the records, such as a registry that cannot be reached. A value it cannot
   * prepare for should fail in `deserialize` instead, as a bad record.
   */
  prepare?(values: readonly (Buffer | null)[]): Promise<void>;
}

/** Turns an element into bytes (Flink's `SerializationSchema<T>`). */
export interface SerializationSchema<T> {
  serialize(element: T): Buffer | string | null;
  /**
   * Readies the schema before its first element in a container (registers or looks up a
   * registry subject). It runs again after it fails; its failure fails the batch.
   */
  open?(): Promise<void>;
}

/** Turns a whole Kafka record — key, value, headers, position, timestamp — into an element. */
export interface KafkaRecordDeserializationSchema<T> {
  deserialize(record: KafkaRecord): T;
  /** See {@link DeserializationSchema.isEndOfStream}. */
  isEndOfStream?(nextElement: T): boolean;
  /** See {@link DeserializationSchema.prepare}: once per batch, with the batch's records. */
  prepare?(records: readonly KafkaRecord[]): Promise<void>;
}

export const KafkaRecordDeserializationSchema = {
  /** Reads only the record's value. */
  valueOnly<T>(schema: DeserializationSchema<T>): KafkaRecordDeserializationSchema<T> {
    const prepare = schema.prepare?.bind(schema);
    const isEndOfStream = schema.isEndOfStream?.bind(schema);
    return {
      deserialize: (record) => schema.deserialize(record.value),
      ...(isEndOfStream ? { isEndOfStream } : {}),
      ...(prepare ? { prepare: (records: readonly KafkaRecord[]) => prepare(records.map((record) => record.value)) } : {}),
    };
  },
};

/** UTF-8 strings both ways. A null value is an error (a tombstone is not a string). */
export class SimpleStringSchema implements DeserializationSchema<string>, SerializationSchema<string> {
  deserialize(value: Buffer | null): string {
    if (value === null) throw new Error('The record has a null value (a tombstone), not a string');
    return value.toString('utf8');
  }

  serialize(element: string): Buffer {
    return Buffer.from(element, 'utf8');
  }
}

/**
 * JSON values. Give a `validate` function to check (and narrow) what arrives: it returns
 * the typed value or throws with what is wrong.
 */
export class JsonDeserializationSchema<T> implements DeserializationSchema<T> {
  constructor(private readonly validate: (value: unknown) => T = (value) => value as T) {}

  deserialize(value: Buffer | null): T {
    if (value === null) throw new Error('The record has a null value (a tombstone), not JSON');
    return this.validate(parseJson(value.toString('utf8'), 'the value'));
  }
}

export class JsonSerializationSchema<T> implements SerializationSchema<T> {
  serialize(element: T): Buffer {
    return Buffer.from(JSON.stringify(element), 'utf8');
  }
}
