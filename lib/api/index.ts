// Sluice's DataStream API: Flink's names, TypeScript's idioms.
export { AllWindowedStream, DataStream, DataStreamSink, KeyedStream, SingleOutputStreamOperator, WindowedStream, type NumericField } from './datastream.js';
export {
  BroadcastConnectedStream,
  BroadcastStream,
  CoGroupedWindow,
  ConnectedStreams,
  IntervalJoin,
  IntervalJoined,
  JoinedWindow,
  KeyedBroadcastConnectedStream,
  KeyedConnectedStreams,
  type KeysThenWindow,
  type Tagged,
} from './connected-streams.js';
export {
  BadRecordPolicy,
  CheckpointConfig,
  CheckpointingMode,
  OutputCommit,
  StreamExecutionEnvironment,
  type EnvironmentOptions,
  type EventSourceMappingOptions,
  type FailOptions,
} from './environment.js';
export type {
  AggregateFunction,
  BroadcastContext,
  BroadcastProcessFunction,
  BroadcastReadOnlyContext,
  BroadcastState,
  CoFlatMapFunction,
  CoGroupFunction,
  Collector,
  CoMapFunction,
  CoProcessFunction,
  ElementContext,
  FilterFunction,
  FlatMapFunction,
  JoinFunction,
  KeyedBroadcastProcessFunction,
  KeyedBroadcastReadOnlyContext,
  KeyedCoProcessFunction,
  KeyedProcessContext,
  KeyedProcessFunction,
  KeySelector,
  MapFunction,
  OnTimerContext,
  ProcessAllWindowFunction,
  ProcessContext,
  ProcessFunction,
  ProcessJoinContext,
  ProcessJoinFunction,
  ProcessWindowFunction,
  ReadOnlyBroadcastState,
  ReduceFunction,
  RuntimeContext,
  TimerService,
  WindowContext,
} from './functions.js';
export { OutputTag } from './output-tag.js';
export { RedactableError } from './record-contents.js';
export {
  JsonDeserializationSchema,
  JsonSerializationSchema,
  KafkaRecordDeserializationSchema,
  SimpleStringSchema,
  type DeserializationSchema,
  type SerializationSchema,
} from './serialization.js';
export {
  DEFAULT_BROKER_TRANSACTION_MAX_TIMEOUT_MS,
  DeliveryGuarantee,
  KafkaRecordSerializationSchema,
  KafkaSink,
  RecordTimestamp,
  type Partitioner,
  type SerializationContext,
} from './sink.js';
export { KafkaSource, OffsetResetStrategy, OffsetsInitializer } from './source.js';
export { CountEvictor, DeltaEvictor, TimeEvictor, type Evictor, type EvictorContext, type TimestampedValue } from './evictors.js';
export {
  ContinuousEventTimeTrigger,
  ContinuousProcessingTimeTrigger,
  CountTrigger,
  DeltaTrigger,
  EventTimeTrigger,
  NeverTrigger,
  ProcessingTimeTrigger,
  PurgingTrigger,
  TriggerResult,
  type DeltaFunction,
  type OnMergeContext,
  type Trigger,
  type TriggerContext,
} from './triggers.js';
export {
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  StateTtlConfig,
  StateVisibility,
  UpdateType,
  ValueStateDescriptor,
  type ListState,
  type MapState,
  type ReducingState,
  type ValueState,
} from './state.js';
export { days, hours, MAX_WATERMARK, milliseconds, MIN_WATERMARK, minutes, seconds, Time } from './time.js';
export { WatermarkEmission, WatermarkStrategy, type TimestampAssigner, type WatermarkGenerator, type WatermarkOutput } from './watermark.js';
export {
  EventTimeSessionWindows,
  GLOBAL_WINDOW,
  GlobalWindows,
  maxTimestamp,
  ProcessingTimeSessionWindows,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  type TimeWindow,
  type WindowAssigner,
} from './windows.js';
export type { KafkaRecord } from '../kafka/records.js';
