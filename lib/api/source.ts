import { parseBrokerList } from '../kafka/broker-list.js';
import { objectWith } from './arguments.js';
import {
  KafkaRecordDeserializationSchema,
  type DeserializationSchema,
  type KafkaRecordDeserializationSchema as RecordSchema,
} from './serialization.js';

/** What to do when a partition has no committed offset (Flink's `OffsetResetStrategy`). */
export const OffsetResetStrategy = {
  EARLIEST: 'EARLIEST',
  LATEST: 'LATEST',
  /** Fail: a missing committed offset is an error. */
  NONE: 'NONE',
} as const;
export type OffsetResetStrategy = (typeof OffsetResetStrategy)[keyof typeof OffsetResetStrategy];

export type OffsetsInitializer =
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  | { readonly kind: 'committed'; readonly resetStrategy: OffsetResetStrategy }
  | { readonly kind: 'timestamp'; readonly timestamp: number };

/** Where a source starts reading when it has no checkpoint (Flink's `OffsetsInitializer`). */
export const OffsetsInitializer = {
  earliest: (): OffsetsInitializer => ({ kind: 'earliest' }),
  latest: (): OffsetsInitializer => ({ kind: 'latest' }),
  committedOffsets: (resetStrategy: OffsetResetStrategy = OffsetResetStrategy.NONE): OffsetsInitializer => ({
    kind: 'committed',
    resetStrategy,
  }),
  timestamp: (timestamp: number): OffsetsInitializer => {
    if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
      throw new Error(`OffsetsInitializer.timestamp needs epoch milliseconds ≥ 0, not ${timestamp}`);
    }
    return { kind: 'timestamp', timestamp };
  },
};

export interface KafkaSourceConfig<T> {
  readonly bootstrapServers: readonly string[];
  readonly topics: readonly string[] | undefined;
  readonly topicPattern: RegExp | undefined;
  readonly groupId: string;
  readonly startingOffsets: OffsetsInitializer;
  readonly deserializer: RecordSchema<T>;
  /**
   * The topic's producers keyed every record by the key that the first `keyBy` after this
   * source selects, so keyed state can live with the partition without a repartition topic.
   * Sluice checks it for every element and treats a mismatch as a bad record.
   */
  readonly partitionedByRecordKey: boolean;
  readonly properties: Readonly<Record<string, string>>;
  /** The elements of `env.fromData`: a bounded source for tests, element i at offset i of partition 0. */
  readonly boundedData?: readonly T[];
}

/** A Kafka source, built with {@link KafkaSource.builder}. */
export class KafkaSource<T> {
  private constructor(readonly config: KafkaSourceConfig<T>) {}

  /** The topics as a readable list, for `explain` and errors. */
  describeTopics(): string {
    return this.config.topics ? this.config.topics.join(', ') : `/${this.config.topicPattern?.source ?? ''}/`;
  }

  /** @internal The source behind `env.fromData`; see {@link KafkaSourceConfig.boundedData}. */
  static ofData<T>(topic: string, elements: readonly T[]): KafkaSource<T> {
    const data = [...elements];
    return new KafkaSource<T>({
      bootstrapServers: [],
      topics: [topic],
      topicPattern: undefined,
      groupId: topic,
      startingOffsets: OffsetsInitializer.earliest(),
      deserializer: { deserialize: (record) => data[record.offset] as T },
      partitionedByRecordKey: false,
      properties: {},
      boundedData: data,
    });
  }

  static builder<T>(): KafkaSourceBuilder<T> {
    return new KafkaSourceBuilder<T>((config) => new KafkaSource(config));
  }
}

export class KafkaSourceBuilder<T> {
  private bootstrapServers: string[] | undefined;
  private topics: string[] | undefined;
  private topicPattern: RegExp | undefined;
  private groupId: string | undefined;
  private startingOffsets: OffsetsInitializer = OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
  private deserializer: RecordSchema<T> | undefined;
  private partitionedByRecordKey = false;
  private readonly properties: Record<string, string> = {};

  constructor(private readonly create: (config: KafkaSourceConfig<T>) => KafkaSource<T>) {}

  /** `host:port,host:port` or a list. */
  setBootstrapServers(servers: string | readonly string[]): this {
    this.bootstrapServers = parseBrokerList(
      typeof servers === 'string' ? servers : servers.join(','),
      'KafkaSource bootstrap servers',
    );
    return this;
  }

  setTopics(...topics: (string | readonly string[])[]): this {
    this.topics = topics.flat();
    return this;
  }

  setTopicPattern(pattern: RegExp): this {
    this.topicPattern = pattern;
    return this;
  }

  setGroupId(groupId: string): this {
    this.groupId = groupId;
    return this;
  }

  setStartingOffsets(initializer: OffsetsInitializer): this {
    this.startingOffsets = initializer;
    return this;
  }

  setValueOnlyDeserializer(schema: DeserializationSchema<T>): this {
    this.deserializer = KafkaRecordDeserializationSchema.valueOnly(objectWith('setValueOnlyDeserializer', schema, 'deserialize', 'new SimpleStringSchema()'));
    return this;
  }

  setDeserializer(schema: RecordSchema<T>): this {
    this.deserializer = objectWith('setDeserializer', schema, 'deserialize', '{ deserialize: (record) => ... }');
    return this;
  }

  /** See {@link KafkaSourceConfig.partitionedByRecordKey}. */
  setPartitionedByRecordKey(partitioned = true): this {
    this.partitionedByRecordKey = partitioned;
    return this;
  }

  setProperty(key: string, value: string): this {
    this.properties[key] = value;
    return this;
  }

  build(): KafkaSource<T> {
    const fix = 'KafkaSource.builder()';
    if (!this.bootstrapServers) throw new Error(`${fix} needs setBootstrapServers('host:port')`);
    if (!this.topics && !this.topicPattern) throw new Error(`${fix} needs setTopics('orders') or setTopicPattern(/orders-.*/)`);
    if (this.topics && this.topicPattern) throw new Error(`${fix} takes setTopics or setTopicPattern, not both`);
    if (this.topics?.length === 0 || this.topics?.some((t) => t.trim() === '')) {
      throw new Error(`${fix}.setTopics needs one or more non-empty topic names`);
    }
    if (!this.groupId) throw new Error(`${fix} needs setGroupId('my-pipeline'): the MSK trigger's consumer group`);
    if (!this.deserializer) {
      throw new Error(`${fix} needs setValueOnlyDeserializer(new SimpleStringSchema()) or setDeserializer(...)`);
    }
    return this.create({
      bootstrapServers: this.bootstrapServers,
      topics: this.topics,
      topicPattern: this.topicPattern,
      groupId: this.groupId,
      startingOffsets: this.startingOffsets,
      deserializer: this.deserializer,
      partitionedByRecordKey: this.partitionedByRecordKey,
      properties: { ...this.properties },
    });
  }
}
