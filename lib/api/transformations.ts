import type { OperatorFactory } from '../operators/operator.js';
import type { KeySelector } from './functions.js';
import type { OutputTag } from './output-tag.js';
import type { KafkaSink } from './sink.js';
import type { KafkaSource } from './source.js';
import type { AnyStateDescriptor } from './state.js';
import type { WatermarkStrategy } from './watermark.js';

/**
 * The pipeline as a graph, one node per API call (Flink's `Transformation`). The planner cuts
 * it into stages; the operators run it.
 */
interface BaseTransformation {
  readonly id: number;
  /** Unique within the pipeline; names state, repartition topics and transactional ids. */
  name: string;
  nameIsExplicit: boolean;
  readonly inputs: readonly Transformation[];
}

export interface SourceTransformation extends BaseTransformation {
  readonly kind: 'source';
  readonly source: KafkaSource<unknown>;
  readonly watermarks: WatermarkStrategy<unknown>;
}

export interface OperatorTransformation extends BaseTransformation {
  readonly kind: 'operator';
  /** map, filter, window, ... — for `explain`. */
  readonly operatorKind: string;
  readonly description: string;
  readonly factory: OperatorFactory;
  /** Keyed operators run on the key set by the keyBy before them. */
  readonly keyed: boolean;
  /** Needs event-time timestamps and watermarks. */
  readonly eventTime: boolean;
  readonly state: readonly AnyStateDescriptor[];
  /** Set on `assignTimestampsAndWatermarks`: the strategy that gives the stage its event time. */
  readonly watermarks?: WatermarkStrategy<unknown>;
}

export interface KeyByTransformation extends BaseTransformation {
  readonly kind: 'keyBy';
  readonly keySelector: KeySelector<unknown, unknown>;
  /** `windowAll`'s: every element to one key, through a repartition topic of one partition. */
  readonly allToOne?: true;
  /**
   * A stream connected with a broadcast stream: elements whose key is {@link BROADCAST_KEY} go to
   * every partition of the repartition topic, each shard keeping the broadcast state there. The
   * other side's go by their key (`keyed`) or to the partition of their record's number (`forward`).
   */
  readonly broadcast?: 'keyed' | 'forward';
}

/** The key of broadcast elements, and of each shard's copy of the broadcast state: no user key is this string. */
export const BROADCAST_KEY = '\u0000sluice-broadcast';

/** What a `forward` broadcast connection keys its non-keyed elements by. No state is kept under it. */
export const FORWARD_KEY = '\u0000sluice-forward';

export interface UnionTransformation extends BaseTransformation {
  readonly kind: 'union';
}

export interface SideOutputTransformation extends BaseTransformation {
  readonly kind: 'sideOutput';
  readonly tag: OutputTag<unknown>;
}

export interface SinkTransformation extends BaseTransformation {
  readonly kind: 'sink';
  readonly sink: KafkaSink<unknown>;
}

export type Transformation =
  | SourceTransformation
  | OperatorTransformation
  | KeyByTransformation
  | UnionTransformation
  | SideOutputTransformation
  | SinkTransformation;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewTransformation = DistributiveOmit<Transformation, 'id' | 'nameIsExplicit'>;
