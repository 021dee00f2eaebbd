import type { BadRecordPolicy, EventSourceMappingOptions, OutputCommit } from '../api/environment.js';
import type { AnyStateDescriptor } from '../api/state.js';
import type { WatermarkEmission } from '../api/watermark.js';
import type {
  KeyByTransformation,
  OperatorTransformation,
  SideOutputTransformation,
  SinkTransformation,
  SourceTransformation,
  Transformation,
  UnionTransformation,
} from '../api/transformations.js';
import type { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';

/** A compiled pipeline: stages, each the work of one shard (one partition of its input topic). */
export interface Plan {
  readonly pipeline: string;
  /**
   * The deployment stage (`sluice deploy --stage`, `SLUICE_DEPLOYMENT_STAGE` in the functions):
   * part of every consumer group, transactional id and repartition topic (lib/plan/names.ts).
   * Unset offline and in tests.
   */
  readonly deploymentStage?: string;
  readonly stages: readonly Stage[];
  readonly maxParallelism: number;
  readonly parallelism: number;
  readonly checkpointing: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly minPauseMs: number;
    readonly maxCommitDelayMs: number;
    /** When EXACTLY_ONCE output becomes visible (`getCheckpointConfig().setOutputCommit`). */
    readonly outputCommit: OutputCommit;
  };
  readonly badRecordPolicy: BadRecordPolicy;
  /** Whether error messages and dead-letter headers may quote records (`env.setRecordContentsInErrors`). */
  readonly recordContentsInErrors?: boolean;
  /** A record whose event time is further ahead of processing time is a bad record (`env.setMaxEventTimeAhead`). */
  readonly maxEventTimeAheadMs?: number;
  /** EXACTLY_ONCE when any sink is; repartition topics then carry transactional writes too. */
  readonly internalGuarantee: DeliveryGuarantee;
  /** When source stages emit watermarks (`env.setWatermarkEmission`). */
  readonly watermarkEmission: WatermarkEmission;
  /** The triggers' batching (`env.setEventSourceMapping`); unset fields are the deployment's. */
  readonly eventSourceMapping: EventSourceMappingOptions;
}

export type StageInput =
  | {
      readonly kind: 'source';
      readonly source: SourceTransformation;
      /** The source declared its records keyed by the first keyBy's key. */
      readonly partitionedByRecordKey: boolean;
    }
  | {
      readonly kind: 'repartition';
      readonly topic: string;
      readonly partitions: number;
      readonly keyBy: KeyByTransformation;
      /** Stages that write into the topic. */
      readonly upstream: string[];
    };

export interface Stage {
  readonly id: string;
  readonly input: StageInput;
  /** This stage's nodes, inputs before the nodes they feed. */
  readonly nodes: PlanNode[];
}

export interface PlanEdge {
  readonly from: number;
  /** Set when the edge carries a side output of `from`. */
  readonly sideOutput?: string;
}

interface BaseNode {
  /** The transformation's id; unique within a stage. */
  readonly id: number;
  readonly name: string;
  readonly inputs: PlanEdge[];
}

export type PlanNode =
  | (BaseNode & { readonly role: 'source'; readonly transformation: SourceTransformation })
  | (BaseNode & { readonly role: 'repartition-input'; readonly transformation: KeyByTransformation })
  | (BaseNode & {
      readonly role: 'operator';
      readonly transformation: OperatorTransformation;
      readonly state: readonly AnyStateDescriptor[];
    })
  | (BaseNode & {
      readonly role: 'keyBy';
      readonly transformation: KeyByTransformation;
      /** Keeps the input's partitioning: each element's key must be its input record's key. */
      readonly inPlace: boolean;
    })
  | (BaseNode & { readonly role: 'union'; readonly transformation: UnionTransformation })
  | (BaseNode & { readonly role: 'sideOutput'; readonly transformation: SideOutputTransformation })
  | (BaseNode & { readonly role: 'sink'; readonly transformation: SinkTransformation })
  | (BaseNode & {
      readonly role: 'repartition';
      readonly transformation: KeyByTransformation;
      readonly topic: string;
      readonly partitions: number;
    });

export type { Transformation };
