import type { StreamExecutionEnvironment } from '../api/environment.js';
import { createDocumentClient, type AwsClientOptions } from '../aws/clients.js';
import { KafkaAdmin } from '../kafka/admin.js';
import { KafkaCommitter } from '../kafka/committer.js';
import { brokersFromEnvironment, type KafkaConnectionOptions } from '../kafka/connection.js';
import type { Plan } from '../plan/plan.js';
import { planPipeline } from '../plan/planner.js';
import { DynamoCoordinatorStore, type CoordinatorStore } from '../state/coordinator-store.js';
import { DynamoShardStore } from '../state/dynamodb-shard-store.js';
import type { ShardStore } from '../state/shard-store.js';
import { listShards, type ShardTarget } from './coordinator.js';
import { Processor, type ProcessorOptions } from './processor.js';

/** Where a deployed (or offline) pipeline keeps its state and reaches Kafka. */
export interface RuntimeConfig {
  readonly tableName: string;
  readonly kafka: KafkaConnectionOptions;
  readonly aws?: AwsClientOptions;
}

/**
 * The runtime's settings from the function's environment: `SLUICE_STATE_TABLE`,
 * `KAFKA_BROKERS`, and `SLUICE_AWS_ENDPOINT` (offline mode's emulators).
 */
export function configFromEnvironment(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const tableName = env.SLUICE_STATE_TABLE;
  if (!tableName) throw new Error('SLUICE_STATE_TABLE is not set: the name of the pipeline\'s DynamoDB state table');
  const brokers = brokersFromEnvironment(env);
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: the bootstrap brokers, host:port,host:port');
  const endpoint = env.SLUICE_AWS_ENDPOINT;
  return { tableName, kafka: { brokers }, ...(endpoint ? { aws: { endpoint } } : {}) };
}

/**
 * One pipeline's runtime: its plan, stores and Kafka clients, built once per process (a
 * Lambda container reuses it across invocations).
 */
export class PipelineRuntime {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly processor: Processor;
  readonly committer: KafkaCommitter;
  private readonly admin: KafkaAdmin;
  private shardList: Promise<ShardTarget[]> | undefined;

  constructor(
    pipeline: StreamExecutionEnvironment,
    readonly config: RuntimeConfig,
    processorOptions: Pick<ProcessorOptions, 'clock' | 'onStep' | 'transactionPoolSize'> = {},
  ) {
    this.plan = planPipeline(pipeline);
    const client = createDocumentClient(config.aws);
    this.store = new DynamoShardStore(client, config.tableName);
    this.coordinator = new DynamoCoordinatorStore(client, config.tableName);
    this.processor = new Processor({ plan: this.plan, store: this.store, coordinator: this.coordinator, kafka: config.kafka, ...processorOptions });
    this.committer = new KafkaCommitter(config.kafka);
    this.admin = new KafkaAdmin(config.kafka);
  }

  /** Every shard of the pipeline, read from the brokers once per process. */
  shards(): Promise<ShardTarget[]> {
    this.shardList ??= listShards(this.plan, this.admin).catch((error: unknown) => {
      this.shardList = undefined;
      throw error;
    });
    return this.shardList;
  }

  async close(): Promise<void> {
    await this.processor.close();
    await this.committer.close();
    await this.admin.close();
  }
}
