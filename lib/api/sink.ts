import { parseBrokerList } from '../kafka/broker-list.js';
import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import type { OutputRecord } from '../kafka/records.js';
import { described, functionOf } from './arguments.js';
import type { SerializationSchema } from './serialization.js';

export { DeliveryGuarantee };

export interface SerializationContext {
  /** The element's timestamp (a window result's is the window's last millisecond). */
  readonly timestamp: number | undefined;
  /** The partition count of `topic`, for custom partitioners. */
  partitionCount(topic: string): number;
}

/** Turns an element into the Kafka record to write (Flink's `KafkaRecordSerializationSchema<T>`). */
export interface KafkaRecordSerializationSchema<T> {
  serialize(element: T, context: SerializationContext): OutputRecord;
  /** See {@link SerializationSchema.open}: readies the key and value schemas before the first element. */
  open?(): Promise<void>;
  /** The fixed topic, when there is one (for `explain`). */
  readonly topic: string | undefined;
  /** Which time the records carry, when the builder made the schema (for `explain`). */
  readonly recordTimestamp?: RecordTimestamp;
}

/**
 * Which time a sink record carries. Flink's KafkaSink writes the element's timestamp, and so
 * does Sluice by default; a topic with time retention then deletes output whose events are
 * older than its retention.ms (a backfill, a replay of old input) at its next check.
 */
export const RecordTimestamp = {
  /** The element's timestamp: a window result's is its window's last millisecond. As Flink. */
  ELEMENT: 'ELEMENT',
  /** None: the producer stamps the time of writing, so retention counts from when the output was written. */
  WRITE_TIME: 'WRITE_TIME',
} as const;

export type RecordTimestamp = (typeof RecordTimestamp)[keyof typeof RecordTimestamp];

export type Partitioner<T> = (element: T, key: Buffer | null, topic: string, partitions: number) => number;
type Bytes = Buffer | string | null;

function bytes(value: Buffer | string | null): Buffer | null {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

/** A serialization schema, or a function from element to bytes as one, checked when the pipeline is built. */
function serializationSchemaOf<T>(method: string, schema: SerializationSchema<T> | ((element: T) => Bytes)): SerializationSchema<T> {
  if (typeof schema === 'function') return { serialize: schema };
  if (typeof (schema as Partial<SerializationSchema<T>> | null)?.serialize !== 'function') {
    throw new Error(`${method} takes a SerializationSchema (an object with serialize(element), e.g. new SimpleStringSchema()) or a function element => bytes, not ${described(schema)}`);
  }
  return schema;
}

export const KafkaRecordSerializationSchema = {
  builder<T>() {
    let topic: string | undefined;
    let topicSelector: ((element: T) => string) | undefined;
    let keySchema: SerializationSchema<T> | undefined;
    let valueSchema: SerializationSchema<T> | undefined;
    let headerProvider: ((element: T) => Record<string, string | Buffer>) | undefined;
    let partitioner: Partitioner<T> | undefined;
    let recordTimestamp: RecordTimestamp = RecordTimestamp.ELEMENT;
    const builder = {
      setTopic(name: string) {
        topic = name;
        return builder;
      },
      setTopicSelector(selector: (element: T) => string) {
        topicSelector = functionOf('setTopicSelector', selector, 'element => topic');
        return builder;
      },
      /** A serialization schema, or a function from element to key. */
      setKeySerializationSchema(schema: SerializationSchema<T> | ((element: T) => Bytes)) {
        keySchema = serializationSchemaOf('setKeySerializationSchema', schema);
        return builder;
      },
      /** A serialization schema, or a function from element to value. */
      setValueSerializationSchema(schema: SerializationSchema<T> | ((element: T) => Bytes)) {
        valueSchema = serializationSchemaOf('setValueSerializationSchema', schema);
        return builder;
      },
      setHeaderProvider(provider: (element: T) => Record<string, string | Buffer>) {
        headerProvider = functionOf('setHeaderProvider', provider, 'element => headers');
        return builder;
      },
      setPartitioner(custom: Partitioner<T>) {
        partitioner = functionOf('setPartitioner', custom, '(element, key, topic, partitions) => partition');
        return builder;
      },
      /** `RecordTimestamp.ELEMENT` (the default, as Flink) or `RecordTimestamp.WRITE_TIME`. */
      setRecordTimestamp(timestamp: RecordTimestamp) {
        if (!Object.values(RecordTimestamp).includes(timestamp)) {
          throw new Error(`setRecordTimestamp takes RecordTimestamp.ELEMENT or RecordTimestamp.WRITE_TIME, not ${JSON.stringify(timestamp)}`);
        }
        recordTimestamp = timestamp;
        return builder;
      },
      build(): KafkaRecordSerializationSchema<T> {
        const fix = 'KafkaRecordSerializationSchema.builder()';
        if (!topic && !topicSelector) throw new Error(`${fix} needs setTopic('name') or setTopicSelector(element => name)`);
        if (topic && topicSelector) throw new Error(`${fix} takes setTopic or setTopicSelector, not both`);
        const serializeValue = valueSchema;
        const serializeKey = keySchema;
        if (!serializeValue) {
          throw new Error(`${fix} needs setValueSerializationSchema(new SimpleStringSchema()) or another schema`);
        }
        const fixedTopic = topic;
        const select = topicSelector;
        const stampsElementTime = recordTimestamp === RecordTimestamp.ELEMENT;
        const opening = [serializeKey, serializeValue].flatMap((schema) => (schema?.open ? [schema.open.bind(schema)] : []));
        const open = async () => {
          await Promise.all(opening.map((openSchema) => openSchema()));
        };
        return {
          topic: fixedTopic,
          recordTimestamp,
          ...(opening.length > 0 ? { open } : {}),
          serialize(element, context) {
            const target = fixedTopic ?? select?.(element) ?? '';
            const key = serializeKey ? bytes(serializeKey.serialize(element)) : null;
            const headers = headerProvider
              ? Object.entries(headerProvider(element)).map(([name, value]) => ({ key: name, value }))
              : undefined;
            return {
              topic: target,
              key,
              value: bytes(serializeValue.serialize(element)),
              ...(headers ? { headers } : {}),
              ...(context.timestamp === undefined || !stampsElementTime ? {} : { timestamp: context.timestamp }),
              ...(partitioner ? { partition: partitioner(element, key, target, context.partitionCount(target)) } : {}),
            };
          },
        };
      },
    };
    return builder;
  },
};

/** Kafka's default `transaction.max.timeout.ms`, which a sink's transaction timeout must not exceed. */
export const DEFAULT_BROKER_TRANSACTION_MAX_TIMEOUT_MS = 900_000;

export interface KafkaSinkConfig<T> {
  readonly bootstrapServers: readonly string[];
  readonly serializer: KafkaRecordSerializationSchema<T>;
  readonly deliveryGuarantee: DeliveryGuarantee;
  readonly transactionalIdPrefix: string | undefined;
  /** `transaction.timeout.ms`; 15 minutes unless set as a property. */
  readonly transactionTimeoutMs: number;
  readonly brokerTransactionMaxTimeoutMs: number;
  readonly properties: Readonly<Record<string, string>>;
}

/** A Kafka sink, built with {@link KafkaSink.builder}. */
export class KafkaSink<T> {
  private constructor(readonly config: KafkaSinkConfig<T>) {}

  static builder<T>(): KafkaSinkBuilder<T> {
    return new KafkaSinkBuilder<T>((config) => new KafkaSink(config));
  }
}

export class KafkaSinkBuilder<T> {
  private bootstrapServers: string[] | undefined;
  private serializer: KafkaRecordSerializationSchema<T> | undefined;
  private deliveryGuarantee: DeliveryGuarantee = DeliveryGuarantee.NONE;
  private transactionalIdPrefix: string | undefined;
  private brokerTransactionMaxTimeoutMs = DEFAULT_BROKER_TRANSACTION_MAX_TIMEOUT_MS;
  private readonly properties: Record<string, string> = {};

  constructor(private readonly create: (config: KafkaSinkConfig<T>) => KafkaSink<T>) {}

  setBootstrapServers(servers: string | readonly string[]): this {
    this.bootstrapServers = parseBrokerList(
      typeof servers === 'string' ? servers : servers.join(','),
      'KafkaSink bootstrap servers',
    );
    return this;
  }

  setRecordSerializer(serializer: KafkaRecordSerializationSchema<T>): this {
    this.serializer = serializer;
    return this;
  }

  setDeliveryGuarantee(guarantee: DeliveryGuarantee): this {
    this.deliveryGuarantee = guarantee;
    return this;
  }

  setTransactionalIdPrefix(prefix: string): this {
    this.transactionalIdPrefix = prefix;
    return this;
  }

  /** A Kafka producer property, for example `transaction.timeout.ms`. */
  setProperty(key: string, value: string): this {
    this.properties[key] = value;
    return this;
  }

  /** The brokers' `transaction.max.timeout.ms`, when it is not Kafka's default of 15 minutes. */
  setBrokerTransactionMaxTimeout(ms: number): this {
    this.brokerTransactionMaxTimeoutMs = ms;
    return this;
  }

  build(): KafkaSink<T> {
    const fix = 'KafkaSink.builder()';
    if (!this.bootstrapServers) throw new Error(`${fix} needs setBootstrapServers('host:port')`);
    if (!this.serializer) {
      throw new Error(`${fix} needs setRecordSerializer(KafkaRecordSerializationSchema.builder()...build())`);
    }
    const prefix = this.transactionalIdPrefix;
    if (this.deliveryGuarantee === DeliveryGuarantee.EXACTLY_ONCE && (!prefix || prefix.trim() === '')) {
      throw new Error(
        `${fix} with DeliveryGuarantee.EXACTLY_ONCE needs setTransactionalIdPrefix('my-pipeline-tx'): ` +
          `a prefix unique to this pipeline, from which its transactional ids are named`,
      );
    }
    const timeoutProperty = this.properties['transaction.timeout.ms'];
    const transactionTimeoutMs = timeoutProperty === undefined ? DEFAULT_BROKER_TRANSACTION_MAX_TIMEOUT_MS : Number(timeoutProperty);
    if (!Number.isInteger(transactionTimeoutMs) || transactionTimeoutMs <= 0) {
      throw new Error(`${fix}: transaction.timeout.ms must be a positive whole number of milliseconds, not "${timeoutProperty}"`);
    }
    if (transactionTimeoutMs > this.brokerTransactionMaxTimeoutMs) {
      throw new Error(
        `${fix}: transaction.timeout.ms (${transactionTimeoutMs}) exceeds the brokers' transaction.max.timeout.ms ` +
          `(${this.brokerTransactionMaxTimeoutMs}); the broker would refuse every transaction. Lower ` +
          `transaction.timeout.ms, or raise the brokers' limit and call setBrokerTransactionMaxTimeout.`,
      );
    }
    return this.create({
      bootstrapServers: this.bootstrapServers,
      serializer: this.serializer,
      deliveryGuarantee: this.deliveryGuarantee,
      transactionalIdPrefix: prefix,
      transactionTimeoutMs,
      brokerTransactionMaxTimeoutMs: this.brokerTransactionMaxTimeoutMs,
      properties: { ...this.properties },
    });
  }
}
