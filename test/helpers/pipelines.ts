// Pipelines the runtime tests share.
import {
  BadRecordPolicy,
  DeliveryGuarantee,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  OffsetResetStrategy,
  OffsetsInitializer,
  OutputCommit,
  OutputTag,
  RecordTimestamp,
  seconds,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkEmission,
  WatermarkStrategy,
  type DataStream,
  type DeserializationSchema,
  type SerializationSchema,
} from '../../lib/api/index.js';

export interface Order {
  orderId: string;
  category: string;
  amount: number;
  timestamp: number;
}

export interface Total {
  category: string;
  windowStart: number;
  amount: number;
}

export interface OrderTotalsOptions {
  readonly name: string;
  readonly input: string;
  readonly brokers: readonly string[];
  readonly window: number;
  /** What happens to the totals before the sink (by default nothing). */
  readonly rest?: (totals: DataStream<Total>) => DataStream<Total>;
  readonly idlenessMs?: number;
  /** Short checkpoint settings and transaction timeout, for tests of lost transactions. */
  readonly transactionTimeoutMs?: number;
  /** Which time the sink records carry (default the element's, as Flink). */
  readonly recordTimestamp?: RecordTimestamp;
  /** When the source emits watermarks (default per batch). */
  readonly watermarkEmission?: WatermarkEmission;
  /** What happens to a record that fails (default BadRecordPolicy.fail()). */
  readonly badRecordPolicy?: BadRecordPolicy;
  /** The topic the orders too late for their window go to, as JSON, EXACTLY_ONCE (by default they are dropped). */
  readonly lateOutput?: string;
  /** Whether the orders are keyed by category, so that keyBy stays in place (default); else it repartitions. */
  readonly partitionedByRecordKey?: boolean;
  /** When the EXACTLY_ONCE totals become visible (default at checkpoints). */
  readonly outputCommit?: OutputCommit;
  /** How orders are read and totals written (default JSON). */
  readonly formats?: { readonly orders: DeserializationSchema<Order>; readonly totals: SerializationSchema<Total> };
}

/**
 * orders (keyed by category, JSON) → keyBy category in place → tumbling windows →
 * sum('amount') → `rest` → `<name>-out`, EXACTLY_ONCE, checkpoints every 10 s, repartition
 * topics of 2 partitions.
 */
export function orderTotalsPipeline({
  name,
  input,
  brokers,
  window,
  rest = (t) => t,
  idlenessMs,
  transactionTimeoutMs,
  recordTimestamp = RecordTimestamp.ELEMENT,
  watermarkEmission = WatermarkEmission.perBatch(),
  badRecordPolicy = BadRecordPolicy.fail(),
  lateOutput,
  partitionedByRecordKey = true,
  outputCommit = OutputCommit.ON_CHECKPOINT,
  formats = { orders: new JsonDeserializationSchema<Order>(), totals: { serialize: (total) => JSON.stringify(total) } },
}: OrderTotalsOptions) {
  const env = StreamExecutionEnvironment.create({ name }).setWatermarkEmission(watermarkEmission).setBadRecordPolicy(badRecordPolicy);
  env.enableCheckpointing(seconds(10)).setParallelism(2).getCheckpointConfig().setOutputCommit(outputCommit);
  if (transactionTimeoutMs !== undefined) {
    env.enableCheckpointing(1_000).getCheckpointConfig().setCheckpointTimeout(1_000).setMaxCommitDelay(1_000);
  }
  const watermarks = WatermarkStrategy.forBoundedOutOfOrderness<Order>(seconds(10)).withTimestampAssigner((o) => o.timestamp);
  const source = KafkaSource.builder<Order>()
    .setBootstrapServers(brokers)
    .setTopics(input)
    .setGroupId(name)
    .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
    .setValueOnlyDeserializer(formats.orders);
  const totals = env
    .fromSource(
      (partitionedByRecordKey ? source.setPartitionedByRecordKey() : source).build(),
      idlenessMs === undefined ? watermarks : watermarks.withIdleness(idlenessMs),
      'orders',
    )
    .keyBy((order) => order.category)
    .window(TumblingEventTimeWindows.of(window));
  const tooLate = new OutputTag<Order>('too-late');
  const sums = lateOutput === undefined ? totals.sum('amount') : totals.sideOutputLateData(tooLate).sum('amount');
  if (lateOutput !== undefined) {
    const late = KafkaRecordSerializationSchema.builder<Order>().setTopic(lateOutput).setValueSerializationSchema((order) => JSON.stringify(order)).build();
    sums.getSideOutput(tooLate).sinkTo(orderTotalsSink(brokers, name, transactionTimeoutMs, late));
  }
  const out = KafkaRecordSerializationSchema.builder<Total>()
    .setTopic(`${name}-out`)
    .setKeySerializationSchema((a) => a.category)
    .setValueSerializationSchema(formats.totals)
    .setRecordTimestamp(recordTimestamp)
    .build();
  rest(sums.map((total, { timestamp }): Total => ({ category: total.category, windowStart: timestamp + 1 - window, amount: total.amount }))).sinkTo(
    orderTotalsSink(brokers, name, transactionTimeoutMs, out),
  );
  return env;
}

/** An EXACTLY_ONCE sink of orderTotalsPipeline: each of a stage's sinks with the stage's one transactional id prefix and timeout. */
function orderTotalsSink<T>(brokers: readonly string[], name: string, transactionTimeoutMs: number | undefined, serializer: KafkaRecordSerializationSchema<T>): KafkaSink<T> {
  return KafkaSink.builder<T>()
    .setBootstrapServers(brokers)
    .setRecordSerializer(serializer)
    .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
    .setTransactionalIdPrefix(`${name}-tx`)
    .setProperty('transaction.timeout.ms', String(transactionTimeoutMs ?? 900_000))
    .build();
}

/** Strings to `<name>-out`, EXACTLY_ONCE, as tests whose output is lines of text write them. */
export function exactlyOnceLines(name: string, brokers: readonly string[]): KafkaSink<string> {
  return KafkaSink.builder<string>()
    .setBootstrapServers(brokers)
    .setRecordSerializer(KafkaRecordSerializationSchema.builder<string>().setTopic(`${name}-out`).setValueSerializationSchema(new SimpleStringSchema()).build())
    .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
    .setTransactionalIdPrefix(`${name}-tx`)
    .build();
}
