import kafkajs, { type Admin } from 'kafkajs';
import { connectVerified, createKafkaClient, requestListener, type KafkaConnectionOptions } from './connection.js';
import { MissingTopicsError, retryWhileRetriable } from './errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type TimestampType } from './records.js';

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** Defaults to the broker's `default.replication.factor`. */
  readonly replicationFactor?: number;
  /** Topic-level configuration, for example `{ 'retention.ms': '604800000' }`. */
  readonly configs?: Readonly<Record<string, string>>;
}

export interface TopicDescription {
  readonly topic: string;
  readonly partitions: readonly {
    readonly partition: number;
    readonly leader: number;
    readonly replicas: readonly number[];
    /** Earliest offset still in the log. */
    readonly low: string;
    /**
     * The last stable offset: where read_committed reads end, the log's end unless a
     * transaction is open (then its first offset). kafkajs calls it `high`; the log's end past
     * open transactions is `CommittedReader.logEnd` (clients.ts).
     */
    readonly stable: string;
  }[];
}

/** What a topic's configuration says of the records written to it: how long it keeps them, and which it accepts. */
export interface TopicWriteLimits {
  readonly topic: string;
  /** `retention.ms` when `cleanup.policy` deletes; -1 when the topic keeps records whatever their age. */
  readonly retentionMs: number;
  /** `message.timestamp.type`: with LOG_APPEND_TIME the broker stamps records itself, and ages them from then. */
  readonly timestampType: TimestampType;
  /** `message.timestamp.before.max.ms` and `…after.max.ms`: how far a CreateTime may lie from the broker's clock. */
  readonly maxPastMs: number;
  readonly maxFutureMs: number;
  /** `max.message.bytes`: the largest record batch the topic takes, so the largest record too. */
  readonly maxMessageBytes: number;
}


/**
 * A topic's write limits from its configuration. What the configuration leaves out keeps every
 * record whatever its timestamp (a cluster's defaults, which a describe reports, need not);
 * records may be as large as Kafka's default allows.
 */
export function writeLimitsOf(topic: string, config: Readonly<Record<string, string>>): TopicWriteLimits {
  const deletes = (config['cleanup.policy'] ?? 'delete').split(',').includes('delete');
  return {
    topic,
    retentionMs: deletes ? Number(config['retention.ms'] ?? -1) : -1,
    timestampType: config['message.timestamp.type'] === 'LogAppendTime' ? 'LOG_APPEND_TIME' : 'CREATE_TIME',
    maxPastMs: Number(config['message.timestamp.before.max.ms'] ?? Number.MAX_SAFE_INTEGER),
    maxFutureMs: Number(config['message.timestamp.after.max.ms'] ?? Number.MAX_SAFE_INTEGER),
    maxMessageBytes: Number(config['max.message.bytes'] ?? DEFAULT_MAX_MESSAGE_BYTES),
  };
}

export interface ClusterDescription {
  readonly clusterId: string;
  readonly controller: number | null;
  readonly brokers: readonly { readonly nodeId: number; readonly host: string; readonly port: number }[];
}

// Node's ES-module loader does not see this enum among kafkajs's named exports.
const TOPIC_RESOURCE = kafkajs.ConfigResourceTypes.TOPIC;

/** How long a newly created topic may take to get leaders for all its partitions. */
const TOPIC_READY_TIMEOUT_MS = 30_000;

/** Topic and cluster administration. Create one per process and close it when done. */
export class KafkaAdmin {
  private readonly admin: Admin;
  private connected: Promise<void> | undefined;
  private creating: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: KafkaConnectionOptions) {
    this.admin = createKafkaClient(options).admin();
    if (options.onRequest) this.admin.on(this.admin.events.REQUEST, requestListener(options.onRequest));
  }

  private connect(): Promise<void> {
    this.connected ??= connectVerified(this.options, () => this.admin.connect()).catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    return this.connected;
  }

  async describeCluster(): Promise<ClusterDescription> {
    await this.connect();
    const { clusterId, controller, brokers } = await this.admin.describeCluster();
    return { clusterId, controller, brokers: brokers.map(({ nodeId, host, port }) => ({ nodeId, host, port })) };
  }

  async listTopics(): Promise<string[]> {
    await this.connect();
    return this.admin.listTopics();
  }

  /**
   * Creates the topics that do not exist yet. A topic that exists with another partition
   * count is an error rather than something to change silently: partitions decide which
   * shard owns which key, so changing them is a rescale, done on purpose.
   */
  ensureTopics(specs: readonly TopicSpec[]): Promise<{ created: string[] }> {
    // kafkajs's createTopics waits for the new topics' leaders through metadata it shares
    // between calls; two calls at once can see each other's topics half-created and fail.
    const result = this.creating.then(() => this.ensureTopicsNow(specs));
    this.creating = result.catch(() => undefined);
    return result;
  }

  private async ensureTopicsNow(specs: readonly TopicSpec[]): Promise<{ created: string[] }> {
    for (const spec of specs) {
      if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
        throw new Error(`Topic "${spec.topic}": partitions must be a whole number ≥ 1, not ${spec.partitions}`);
      }
    }
    await this.connect();
    const existing = new Set(await this.admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(spec.topic));
    if (missing.length > 0) {
      await this.admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((spec) => ({
          topic: spec.topic,
          numPartitions: spec.partitions,
          replicationFactor: spec.replicationFactor ?? -1,
          configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
      await this.waitForLeaders(missing, TOPIC_READY_TIMEOUT_MS);
    }
    const present = specs.filter((spec) => existing.has(spec.topic));
    if (present.length > 0) {
      const descriptions = await this.describeTopics(present.map((spec) => spec.topic));
      for (const spec of present) {
        const actual = descriptions.find((d) => d.topic === spec.topic)?.partitions.length;
        if (actual !== spec.partitions) {
          throw new Error(
            `Topic "${spec.topic}" exists with ${actual} partitions, but ${spec.partitions} are expected: ` +
              `use the existing count, or rescale deliberately (sluice savepoint, then restore)`,
          );
        }
      }
    }
    return { created: missing.map((spec) => spec.topic) };
  }

  /**
   * Waits until every partition of the new topics has a leader that answers for it. kafkajs's
   * own wait retries only LEADER_NOT_AVAILABLE, but a broker may also answer, for a moment,
   * that it does not host or lead a partition the controller has just created.
   */
  private async waitForLeaders(specs: readonly TopicSpec[], timeoutMs: number): Promise<void> {
    const ready = async () => {
      const { topics } = await this.admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.topic) });
      return specs.every((spec) => {
        const partitions = topics.find((t) => t.name === spec.topic)?.partitions ?? [];
        return partitions.length === spec.partitions && partitions.every((p) => p.leader >= 0);
      });
    };
    const answered = async () => {
      for (const spec of specs) await this.topicOffsets(spec.topic);
    };
    const deadline = Date.now() + timeoutMs;
    while (!(await retryWhileRetriable(ready, timeoutMs))) {
      if (Date.now() > deadline) throw new Error(`Topics ${specs.map((s) => s.topic).join(', ')} have no leader after ${timeoutMs} ms: is the broker healthy?`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await answered();
  }

  /** Runs `request`; when it fails because some of `topics` do not exist, the error names them. */
  private async namingMissingTopics<T>(topics: readonly string[], request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      const existing = new Set(await this.admin.listTopics().catch(() => topics));
      const missing = topics.filter((topic) => !existing.has(topic));
      throw missing.length > 0 ? new MissingTopicsError(missing, error) : error;
    }
  }

  async describeTopics(topics: readonly string[]): Promise<TopicDescription[]> {
    await this.connect();
    const metadata = await this.namingMissingTopics(topics, () => this.admin.fetchTopicMetadata({ topics: [...topics] }));
    return Promise.all(
      metadata.topics.map(async ({ name, partitions }) => {
        const offsets = await this.topicOffsets(name);
        return {
          topic: name,
          partitions: partitions
            .map((p) => {
              const offset = offsets.find((o) => o.partition === p.partitionId);
              return {
                partition: p.partitionId,
                leader: p.leader,
                replicas: p.replicas,
                low: offset?.low ?? '0',
                stable: offset?.high ?? '0',
              };
            })
            .sort((a, b) => a.partition - b.partition),
        };
      }),
    );
  }

  async writeLimits(topics: readonly string[]): Promise<TopicWriteLimits[]> {
    if (topics.length === 0) return [];
    await this.connect();
    const { resources } = await retryWhileRetriable(
      () =>
        this.namingMissingTopics(topics, () => this.admin.describeConfigs({
          includeSynonyms: false,
          resources: topics.map((name) => ({
            type: TOPIC_RESOURCE,
            name,
            configNames: [
              'cleanup.policy',
              'retention.ms',
              'message.timestamp.type',
              'message.timestamp.before.max.ms',
              'message.timestamp.after.max.ms',
              'max.message.bytes',
            ],
          })),
        })),
      TOPIC_READY_TIMEOUT_MS,
    );
    return resources.map(({ resourceName, configEntries }) =>
      writeLimitsOf(resourceName, Object.fromEntries(configEntries.map((entry) => [entry.configName, entry.configValue]))),
    );
  }

  /**
   * A topic created a moment ago may still be settling: its leader answers that it does not
   * lead or host the partition yet (retriable), or kafkajs's fetchTopicOffsets fails with a
   * TypeError when the answer lacks the topic. Either settles within moments, so it is asked again.
   */
  private async topicOffsets(topic: string): Promise<Awaited<ReturnType<Admin['fetchTopicOffsets']>>> {
    const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.admin.fetchTopicOffsets(topic);
      } catch (error) {
        const settling = error instanceof TypeError || (error as { retriable?: unknown }).retriable === true;
        if (!settling || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1_000)));
      }
    }
  }

  /**
   * The offsets a consumer group committed for a topic, by partition (-1: none). A group
   * coordinator that is still loading or moving (a fresh broker creates its offsets topic on
   * the first request) is waited for, up to `deadlineMs`.
   */
  async groupOffsets(groupId: string, topic: string, deadlineMs = 60_000): Promise<Map<number, number>> {
    await this.connect();
    const [entry] = await retryWhileRetriable(() => this.admin.fetchOffsets({ groupId, topics: [topic] }), deadlineMs);
    return new Map((entry?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }

  /** The earliest offset of each partition whose record timestamp is at or after `timestamp`. */
  async offsetsForTimestamp(topic: string, timestamp: number): Promise<Map<number, number>> {
    await this.connect();
    const offsets = await this.admin.fetchTopicOffsetsByTimestamp(topic, timestamp);
    return new Map(offsets.map((p) => [p.partition, Number(p.offset)]));
  }

  /** Grows a topic to `partitions` partitions (Kafka cannot shrink one): a deliberate rescale. */
  async addPartitions(topic: string, partitions: number): Promise<void> {
    await this.connect();
    await this.admin.createPartitions({ topicPartitions: [{ topic, count: partitions }] });
  }

  async deleteTopics(topics: readonly string[]): Promise<void> {
    await this.connect();
    await this.admin.deleteTopics({ topics: [...topics] });
  }

  async close(): Promise<void> {
    if (this.connected) {
      this.connected = undefined;
      await this.admin.disconnect();
    }
  }
}
