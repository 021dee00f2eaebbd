import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The coordinator's record (docs/PROTOCOL.md): which checkpoint was triggered last, which
 * completed last, and up to which checkpoint every transaction is committed. Each write is
 * conditional on the version read, so two coordinators (or commit functions) running at once
 * cannot undo each other.
 */
export interface CoordinatorRecord {
  readonly version: number;
  /** The latest checkpoint triggered (0: none). */
  readonly triggered: number;
  readonly triggeredAt: number;
  /** The latest checkpoint that every shard acknowledged. */
  readonly completed: number;
  readonly completedAt: number;
  /** The latest checkpoint whose transactions are all committed. */
  readonly committed: number;
  /**
   * Each stage's watermark at the completed checkpoint: the minimum over its shards, leaving
   * out idle shards except below an event-time timer one of them still has to fire.
   */
  readonly completedWatermarks: Readonly<Record<string, number>>;
  /**
   * Each stage's watermark at the completed checkpoint over its active shards only: what its
   * idle shards follow, as a Flink operator's watermark is the minimum over active splits.
   * Absent in records written before idle shards followed their stage.
   */
  readonly activeWatermarks?: Readonly<Record<string, number>>;
  /** The same at the committed checkpoint: what later stages may rely on, its output being visible. */
  readonly committedWatermarks: Readonly<Record<string, number>>;
  /**
   * Shards that lost a transaction, until their rollback is done and the checkpoint that
   * covered it is committed (docs/PROTOCOL.md, "Rollback of a lost transaction"). Absent in
   * records written before rollbacks were requested this way.
   */
  readonly rollbacks?: readonly RollbackRequest[];
  /**
   * The pipeline's state at the latest completed checkpoints, while it stayed the same
   * (lib/runtime/quiescence.ts): `checkpoints` completions in a row found `state`.
   */
  readonly resting?: { readonly state: string; readonly checkpoints: number };
  /**
   * The coordinator rests: it triggers nothing, and its schedule may be off, until an invocation
   * that takes input wakes it (docs/PROTOCOL.md, "At rest").
   */
  readonly asleep?: boolean;
}

/** The checkpoint settings that decide when the coordinator triggers and runs. */
export interface CheckpointTiming {
  readonly intervalMs: number;
  readonly minPauseMs: number;
}

/** When the next checkpoint may be triggered: an interval after the last trigger, and the minimum pause after the last completion. */
export function nextCheckpointDueAt(record: CoordinatorRecord, checkpointing: CheckpointTiming): number {
  return Math.max(record.triggeredAt + checkpointing.intervalMs, record.completedAt + checkpointing.minPauseMs);
}

/**
 * A shard whose pre-committed transaction the broker lost, for its own next invocation to
 * roll back: the commit function records it, the shard's invocation does it and marks it done.
 */
export interface RollbackRequest {
  readonly stageId: string;
  readonly topic: string;
  readonly partition: number;
  /** The epoch whose transaction was lost: the shard replays its input from where that epoch started. */
  readonly epoch: number;
  /** The checkpoint that covered the lost transaction. */
  readonly checkpoint: number;
  /** The committed checkpoint whose state the rollback starts from: the last one before `checkpoint`. */
  readonly base: number;
  /** What the broker said of the transaction. */
  readonly reason: string;
  /** When an invocation last began the rollback: the coordinator lets it work before it ticks the shard again. */
  readonly attemptedAt?: number;
  /**
   * The shard has rolled back. Until `checkpoint` is committed the request stays, so that the
   * stage's committed watermark is held back at that commit: the replay's output is not visible yet.
   */
  readonly done?: boolean;
}

export const INITIAL_COORDINATOR_RECORD: CoordinatorRecord = {
  version: 0,
  triggered: 0,
  triggeredAt: 0,
  completed: 0,
  completedAt: 0,
  committed: 0,
  completedWatermarks: {},
  committedWatermarks: {},
};

export interface CoordinatorStore {
  get(): Promise<CoordinatorRecord>;
  /** Writes `record` (with the version raised) if the stored version is still `record.version`. */
  update(record: CoordinatorRecord): Promise<boolean>;
}

export class MemoryCoordinatorStore implements CoordinatorStore {
  private record = INITIAL_COORDINATOR_RECORD;

  get(): Promise<CoordinatorRecord> {
    return Promise.resolve(this.record);
  }

  update(record: CoordinatorRecord): Promise<boolean> {
    if (record.version !== this.record.version) return Promise.resolve(false);
    this.record = { ...record, version: record.version + 1 };
    return Promise.resolve(true);
  }
}

/** The coordinator record in the pipeline's state table: pk `coordinator`, sk `record`. */
export class DynamoCoordinatorStore implements CoordinatorStore {
  private static readonly KEY = { pk: 'coordinator', sk: 'record' };

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(): Promise<CoordinatorRecord> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: DynamoCoordinatorStore.KEY, ConsistentRead: true }),
    );
    return Item ? (JSON.parse(Item.record as string) as CoordinatorRecord) : INITIAL_COORDINATOR_RECORD;
  }

  async update(record: CoordinatorRecord): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...DynamoCoordinatorStore.KEY, version: record.version + 1, record: JSON.stringify({ ...record, version: record.version + 1 }) },
          ...(record.version === 0
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': record.version } }),
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
