import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import { createDocumentClient, createS3Client, type AwsClientOptions } from './clients.js';
import { requiredEnvironment } from './environment.js';
import { RequestCounter } from './request-metrics.js';
import { S3SnapshotStore } from '../snapshot/s3-store.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import { KafkaAdmin } from '../kafka/admin.js';
import { connectKafka, type CommittedReader, type KafkaClients, type TopicAdmin, type TransactionCommitter } from '../kafka/clients.js';
import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import { kafkaFromEnvironment, usesScram, type KafkaConnectionOptions, type ScramCredentials } from '../kafka/connection.js';
import { SCRAM_SECRET_VARIABLE, scramCredentials } from './kafka-secret.js';
import type { Plan } from '../plan/plan.js';
import { validDeploymentStage } from '../plan/names.js';
import { assertDeployable, planPipeline } from '../plan/planner.js';
import { planTopics } from '../plan/topics.js';
import { DynamoCoordinatorStore, type CoordinatorStore } from '../state/coordinator-store.js';
import { DynamoShardStore } from '../state/dynamodb-shard-store.js';
import type { ShardStore } from '../state/shard-store.js';
import { listShards, type ShardTarget } from '../runtime/shard-record.js';
import { DeploymentClaim } from '../runtime/deployment-claim.js';
import { wakeCoordinator, type CoordinatorSchedule } from '../runtime/quiescence.js';
import { EventBridgeSchedule } from './coordinator-schedule.js';
import { Processor, type ProcessorOptions } from '../runtime/processor.js';
import { resumeFailedShards, type ResumedShard } from '../runtime/resume.js';
import { restoreSnapshot, writeSavepoint, type RestoreReport, type RestoreSource } from '../runtime/savepoints.js';

/** Where a deployed (or offline) pipeline keeps its state and reaches Kafka. */
export interface RuntimeConfig {
  readonly tableName: string;
  /**
   * The S3 bucket of checkpoint snapshots (under the prefix `<pipeline>/`). Without it
   * checkpoints still commit transactions, but there is nothing to restore or roll back to.
   */
  readonly snapshotBucket?: string;
  readonly kafka: KafkaConnectionOptions;
  /** The deployment stage, part of the pipeline's names on the brokers (see {@link Plan.deploymentStage}); none offline. */
  readonly deploymentStage?: string;
  /**
   * What tells this deployment from another under the same names (`<account>:<region>:<stack>`):
   * with it, the functions refuse to run beside another deployment ({@link DeploymentClaim}).
   */
  readonly deploymentId?: string;
  /** The EventBridge rule that runs the coordinator: turned off while the pipeline rests ({@link EventBridgeSchedule}). */
  readonly coordinatorRule?: string;
  readonly dynamodb?: AwsClientOptions;
  readonly s3?: AwsClientOptions;
}

/**
 * The runtime's settings from the function's environment: `SLUICE_STATE_TABLE`,
 * `SLUICE_SNAPSHOT_BUCKET`, `SLUICE_DEPLOYMENT_STAGE` (set by the deployment), `KAFKA_BROKERS` and
 * `KAFKA_AUTH` (see {@link kafkaFromEnvironment}), and for offline mode's emulators
 * `SLUICE_DYNAMODB_ENDPOINT` and `SLUICE_S3_ENDPOINT`.
 */
export function configFromEnvironment(env: NodeJS.ProcessEnv = process.env, scram?: ScramCredentials): RuntimeConfig {
  const tableName = requiredEnvironment('SLUICE_STATE_TABLE', "the name of the pipeline's DynamoDB state table", env);
  const snapshotBucket = requiredEnvironment('SLUICE_SNAPSHOT_BUCKET', "the name of the pipeline's S3 snapshot bucket", env);
  const kafka = kafkaFromEnvironment(env, scram);
  if (!kafka) throw new Error('KAFKA_BROKERS is not set: the bootstrap brokers, host:port,host:port');
  const dynamodbEndpoint = env.SLUICE_DYNAMODB_ENDPOINT;
  const s3Endpoint = env.SLUICE_S3_ENDPOINT;
  const deploymentStage = env.SLUICE_DEPLOYMENT_STAGE;
  const deploymentId = env.SLUICE_DEPLOYMENT_ID;
  const coordinatorRule = env.SLUICE_COORDINATOR_RULE;
  return {
    tableName,
    snapshotBucket,
    kafka,
    ...(deploymentStage ? { deploymentStage: validDeploymentStage(deploymentStage) } : {}),
    ...(deploymentId ? { deploymentId } : {}),
    ...(coordinatorRule ? { coordinatorRule } : {}),
    ...(dynamodbEndpoint ? { dynamodb: { endpoint: dynamodbEndpoint } } : {}),
    ...(s3Endpoint ? { s3: { endpoint: s3Endpoint } } : {}),
  };
}

/**
 * {@link configFromEnvironment}, with the SASL/SCRAM credentials read from the secret
 * `KAFKA_SASL_SECRET_ARN` when `KAFKA_AUTH=SCRAM`: so no credential is ever in the
 * environment. Call once per container.
 */
export async function configWithSecrets(env: NodeJS.ProcessEnv = process.env, secrets?: SecretsManagerClient): Promise<RuntimeConfig> {
  const secretId = env[SCRAM_SECRET_VARIABLE];
  return configFromEnvironment(env, usesScram(env) && secretId ? await scramCredentials(secretId, secrets) : undefined);
}

/** How a runtime's functions run: the processor's test hooks, and how the coordinator is scheduled and called. */
export type RuntimeOptions = Pick<ProcessorOptions, 'clock' | 'onStep' | 'transactionPoolSize' | 'callCoordinator'> & {
  /** The coordinator's schedule, off while the pipeline rests; by default its EventBridge rule, with {@link RuntimeConfig.coordinatorRule}. */
  readonly schedule?: CoordinatorSchedule;
};

/**
 * One pipeline's runtime: its plan, stores and Kafka clients, built once per process (a
 * Lambda container reuses it across invocations).
 */
export class PipelineRuntime {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly coordinator: CoordinatorStore;
  readonly snapshots: SnapshotStore | undefined;
  /** Every DynamoDB and S3 request of this runtime, by operation. */
  readonly requests = new RequestCounter();
  readonly processor: Processor;
  readonly kafka: KafkaClients;
  readonly committer: TransactionCommitter;
  readonly admin: TopicAdmin;
  readonly reader: CommittedReader;
  /** The coordinator's schedule, off while the pipeline rests; none where nothing turns it off (tests). */
  readonly schedule: CoordinatorSchedule | undefined;
  /** Present for a deployed pipeline (with {@link RuntimeConfig.deploymentId}): the handlers check it before they work. */
  readonly deployment: DeploymentClaim | undefined;
  private readonly claimAdmin: KafkaAdmin | undefined;
  private shardList: Promise<ShardTarget[]> | undefined;
  private topicsFound: Promise<unknown> | undefined;

  constructor(
    pipeline: StreamExecutionEnvironment,
    readonly config: RuntimeConfig,
    { schedule, ...processorOptions }: RuntimeOptions = {},
  ) {
    this.schedule = schedule ?? (config.coordinatorRule ? new EventBridgeSchedule(config.coordinatorRule) : undefined);
    this.plan = assertDeployable(planPipeline(pipeline, { deploymentStage: config.deploymentStage }));
    const client = createDocumentClient(config.dynamodb);
    this.requests.attach(client, 'DynamoDB');
    this.store = new DynamoShardStore(client, config.tableName);
    this.coordinator = new DynamoCoordinatorStore(client, config.tableName);
    if (config.snapshotBucket) {
      const s3 = createS3Client(config.s3);
      this.requests.attach(s3, 'S3');
      this.snapshots = new S3SnapshotStore(s3, config.snapshotBucket, `${this.plan.pipeline}/`);
    }
    this.kafka = connectKafka(config.kafka);
    this.committer = this.kafka.committer;
    this.admin = this.kafka.admin;
    this.reader = this.kafka.reader;
    if (config.deploymentId) {
      this.claimAdmin = new KafkaAdmin(config.kafka);
      this.deployment = new DeploymentClaim({
        plan: this.plan,
        deployment: config.deploymentId,
        admin: this.claimAdmin,
        reader: this.reader,
        writer: () => this.kafka.recordWriter(DeliveryGuarantee.AT_LEAST_ONCE),
        ...(processorOptions.clock ? { clock: processorOptions.clock } : {}),
      });
    }
    this.processor = new Processor({
      plan: this.plan,
      store: this.store,
      coordinator: this.coordinator,
      kafka: this.kafka,
      requests: this.requests,
      ...(this.snapshots ? { snapshots: this.snapshots } : {}),
      ...processorOptions,
    });
  }

  /** Every shard of the pipeline, read from the brokers once per process. */
  shards(): Promise<ShardTarget[]> {
    this.shardList ??= listShards(this.plan, this.admin).catch((error: unknown) => {
      this.shardList = undefined;
      throw error;
    });
    return this.shardList;
  }

  /**
   * Every topic the pipeline names (sources, sinks, repartition and dead-letter topics) exists:
   * checked once per process, and a missing one fails with `MissingTopicsError` naming
   * each, before anything is triggered.
   */
  topicsExist(): Promise<unknown> {
    const { sources, sinks, repartitions, deadLetters } = planTopics(this.plan);
    this.topicsFound ??= this.admin.describeTopics([...new Set([...sources, ...sinks, ...repartitions.map(({ topic }) => topic), ...deadLetters])]).catch(
      (error: unknown) => {
        this.topicsFound = undefined;
        throw error;
      },
    );
    return this.topicsFound;
  }

  private requireSnapshots(): SnapshotStore {
    if (!this.snapshots) throw new Error('Savepoints and restores need the snapshot bucket: set SLUICE_SNAPSHOT_BUCKET');
    return this.snapshots;
  }

  /** Writes a named savepoint of the latest committed checkpoint (see {@link writeSavepoint}). */
  async savepoint(name: string): Promise<{ checkpoint: number; key: string }> {
    const { plan, store, coordinator, committer } = this;
    const shards = await listShards(plan, this.admin);
    return writeSavepoint({ plan, store, coordinator, committer, snapshots: this.requireSnapshots(), shards }, name);
  }

  /** Restores a checkpoint or savepoint into this pipeline, rescaling to its current partitions (see {@link restoreSnapshot}). */
  async restore(source: RestoreSource, clock?: () => number): Promise<RestoreReport> {
    const { plan, store, coordinator, committer, reader } = this;
    const shards = await listShards(plan, this.admin);
    const snapshots = this.requireSnapshots();
    const abortTransactionsOf = (target: ShardTarget) => this.processor.abortTransactionsOf(target);
    const options = { plan, store, coordinator, committer, reader, snapshots, shards, abortTransactionsOf, ...(clock ? { clock } : {}) };
    const report = await restoreSnapshot(options, source);
    await wakeCoordinator(coordinator, this.schedule);
    return report;
  }

  /** Lets every shard stopped at a failing record try it again (see {@link resumeFailedShards}). */
  async resume(): Promise<ResumedShard[]> {
    const resumed = await resumeFailedShards({ plan: this.plan, store: this.store, shards: await listShards(this.plan, this.admin) });
    // Their catching up needs the coordinator's ticks.
    if (resumed.length > 0) await wakeCoordinator(this.coordinator, this.schedule);
    return resumed;
  }

  async close(): Promise<void> {
    await this.deployment?.close();
    await this.claimAdmin?.close();
    await this.processor.close();
    await this.kafka.close();
  }
}
