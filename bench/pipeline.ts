// The seed pipeline's shape on the bench topics, as every Sluice measurement runs it: orders
// keyed by category where they are read (no repartition topic), 5-minute sums, a Kafka sink.
import {
  DeliveryGuarantee,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  minutes,
  OffsetsInitializer,
  OutputCommit,
  seconds,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type DeserializationSchema,
  type SerializationSchema,
} from '../lib/api/index.js';
import { sqlPipeline } from '../lib/sql/index.js';

export interface Order {
  category: string;
  amount: number;
  timestamp: number;
}

export interface WindowSum {
  category: string;
  windowStart: number;
  amount: number;
}

export interface BenchPipelineOptions {
  readonly brokers: readonly string[];
  readonly input: string;
  readonly output: string;
  readonly guarantee: keyof typeof DeliveryGuarantee;
  readonly checkpointIntervalMs: number;
  /** When EXACTLY_ONCE sums become visible (default at checkpoints). */
  readonly outputCommit?: OutputCommit;
  /** How orders are read and sums written (default JSON). */
  readonly formats?: BenchFormats;
}

export interface BenchFormats {
  readonly orders: DeserializationSchema<Order>;
  readonly sums: SerializationSchema<WindowSum>;
}

const JSON_FORMATS: BenchFormats = { orders: new JsonDeserializationSchema<Order>(), sums: { serialize: (sum) => JSON.stringify(sum) } };

/** Bounded out-of-orderness of the pipeline's watermarks: above the orders' 8 s. */
export const BENCH_OUT_OF_ORDERNESS_MS = seconds(10);

export function benchPipeline({
  brokers,
  input,
  output,
  guarantee,
  checkpointIntervalMs,
  outputCommit = OutputCommit.ON_CHECKPOINT,
  formats = JSON_FORMATS,
}: BenchPipelineOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({ name: `bench-${output}` });
  env.enableCheckpointing(checkpointIntervalMs).getCheckpointConfig().setOutputCommit(outputCommit);
  env
    .fromSource(
      KafkaSource.builder<Order>()
        .setBootstrapServers([...brokers])
        .setTopics(input)
        .setGroupId(`${output}-sluice`)
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(formats.orders)
        .setPartitionedByRecordKey()
        .build(),
      WatermarkStrategy.forBoundedOutOfOrderness<Order>(BENCH_OUT_OF_ORDERNESS_MS).withTimestampAssigner((order) => order.timestamp),
      'orders',
    )
    .keyBy((order) => order.category)
    .window(TumblingEventTimeWindows.of(minutes(5)))
    .sum('amount')
    // A window's result carries the window's last millisecond as its timestamp, as in Flink.
    .map((sum, { timestamp }): WindowSum => ({ category: sum.category, windowStart: timestamp + 1 - minutes(5), amount: sum.amount }))
    .sinkTo(
      KafkaSink.builder<WindowSum>()
        .setBootstrapServers([...brokers])
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<WindowSum>()
            .setTopic(output)
            .setKeySerializationSchema((sum) => sum.category)
            .setValueSerializationSchema(formats.sums)
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee[guarantee])
        .setTransactionalIdPrefix(`${output}-tx`)
        .build(),
    );
  return env;
}

export interface Purchase {
  customer: string;
  amount: number;
}

/**
 * A running sum per customer, no windows: every record changes its customer's state, so the
 * keys a batch writes are the customers it saw. The state-size and write-units benchmarks run it.
 */
export function customerTotalsPipeline({ name, brokers, input, output }: { name: string; brokers: readonly string[]; input: string; output: string }): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({ name });
  env.enableCheckpointing(1_000);
  env
    .fromSource(
      KafkaSource.builder<Purchase>()
        .setBootstrapServers([...brokers])
        .setTopics(input)
        .setGroupId(name)
        .setStartingOffsets(OffsetsInitializer.earliest())
        .setValueOnlyDeserializer(new JsonDeserializationSchema<Purchase>())
        .setPartitionedByRecordKey()
        .build(),
      WatermarkStrategy.noWatermarks<Purchase>(),
      'purchases',
    )
    .keyBy((purchase) => purchase.customer)
    .sum('amount')
    .sinkTo(
      KafkaSink.builder<Purchase>()
        .setBootstrapServers([...brokers])
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<Purchase>()
            .setTopic(output)
            .setKeySerializationSchema((total) => total.customer)
            .setValueSerializationSchema({ serialize: (total) => JSON.stringify(total) })
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(`${name}-tx`)
        .build(),
    );
  return env;
}

/**
 * The bench pipeline in Flink SQL, for `npm run bench:sql`: the same orders read the same way,
 * the same 5-minute sums written, keyed by category, with the same guarantee.
 */
export function benchSqlPipeline({ brokers, input, output, guarantee, checkpointIntervalMs }: BenchPipelineOptions): StreamExecutionEnvironment {
  const servers = `'properties.bootstrap.servers' = '${brokers.join(',')}'`;
  return sqlPipeline(`
    SET 'pipeline.name' = 'bench-${output}';
    SET 'execution.checkpointing.interval' = '${checkpointIntervalMs} ms';
    CREATE TABLE orders (category STRING, amount DOUBLE, \`timestamp\` BIGINT, ts AS TO_TIMESTAMP_LTZ(\`timestamp\`, 3),
      WATERMARK FOR ts AS ts - INTERVAL '${BENCH_OUT_OF_ORDERNESS_MS / 1000}' SECOND
    ) WITH ('connector' = 'kafka', 'topic' = '${input}', ${servers}, 'properties.group.id' = '${output}-sluice',
      'scan.startup.mode' = 'earliest-offset', 'format' = 'json', 'sluice.partitioned-by-key' = 'true');
    CREATE TABLE sums (category STRING, windowStart BIGINT, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = '${output}', ${servers},
      'key.format' = 'raw', 'key.fields' = 'category', 'format' = 'json',
      'sink.delivery-guarantee' = '${guarantee.toLowerCase().replace(/_/g, '-')}', 'sink.transactional-id-prefix' = '${output}-tx');
    INSERT INTO sums
    SELECT category, UNIX_TIMESTAMP(CAST(window_start AS STRING)) * 1000, SUM(amount)
    FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' MINUTES))
    GROUP BY category, window_start, window_end;`);
}
