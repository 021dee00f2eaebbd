// Order totals per category and 5-minute window, exactly once: Flink's Kafka job, line for line.
//   orders (JSON {orderId, category, amount, timestamp}) → keyBy category → 5-minute tumbling
//   event-time windows, 10 s out of order → sum('amount') → order-aggregates (JSON), EXACTLY_ONCE.
// `npx sluice offline pipelines/orders.ts` runs it on this machine; `npx sluice deploy` on AWS.
import {
  CheckpointingMode,
  DeliveryGuarantee,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  OffsetResetStrategy,
  OffsetsInitializer,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  Time,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type DeserializationSchema,
  type ElementContext,
} from 'sluice';

export interface Order {
  orderId: string;
  category: string;
  amount: number;
  /** Epoch milliseconds: the order's event time. */
  timestamp: number;
}

/** Reads an order; a record that is not one fails with what is wrong, naming the record. */
export class OrderDeserializationSchema implements DeserializationSchema<Order> {
  deserialize(message: Buffer | null): Order {
    const order = JSON.parse(message?.toString('utf8') ?? 'null') as Partial<Order> | null;
    if (typeof order?.orderId !== 'string' || typeof order.category !== 'string' || typeof order.amount !== 'number' || typeof order.timestamp !== 'number') {
      throw new Error('not an order {orderId, category, amount, timestamp}');
    }
    return { orderId: order.orderId, category: order.category, amount: order.amount, timestamp: order.timestamp };
  }

  /** The orders never end; a bounded read would return true at its last order. */
  isEndOfStream(_nextElement: Order): boolean {
    return false;
  }
}

const WINDOW = Time.minutes(5);
const brokers = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';

const env = StreamExecutionEnvironment.create({ name: 'orders' });
env.enableCheckpointing(10_000);
env.getCheckpointConfig().setCheckpointingMode(CheckpointingMode.EXACTLY_ONCE);

const source = KafkaSource.builder<Order>()
  .setBootstrapServers(brokers)
  .setTopics('orders')
  .setGroupId('order-processor')
  .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
  .setValueOnlyDeserializer(new OrderDeserializationSchema())
  .build();

env
  .fromSource(source, WatermarkStrategy.forBoundedOutOfOrderness<Order>(Time.seconds(10)).withTimestampAssigner((order) => order.timestamp), 'Order Source')
  .keyBy((order) => order.category)
  .window(TumblingEventTimeWindows.of(WINDOW))
  .sum('amount')
  // A window's result carries the window's last millisecond as its timestamp, as in Flink.
  .map((total: Order, { timestamp }: ElementContext) => {
    const windowEnd = (timestamp ?? 0) + 1;
    return JSON.stringify({ category: total.category, windowStart: windowEnd - WINDOW, windowEnd, amount: total.amount });
  })
  .sinkTo(
    KafkaSink.builder<string>()
      .setBootstrapServers(brokers)
      .setRecordSerializer(KafkaRecordSerializationSchema.builder<string>().setTopic('order-aggregates').setValueSerializationSchema(new SimpleStringSchema()).build())
      .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
      .setTransactionalIdPrefix('order-agg-tx')
      .build(),
  );

export default env;

const CATEGORIES = ['books', 'games', 'garden', 'music', 'toys'];
/** Generated orders start at the current hour, so that the topic's retention keeps them. */
const FIRST_ORDER = Math.floor(Date.now() / 3_600_000) * 3_600_000;

/**
 * Order number `index`, for `sluice offline --generate <rate>` (1,000 a second by default):
 * event time runs 50 ms an order, so at that rate a 5-minute window closes every 6 seconds.
 */
export function generateInput(index: number) {
  const order: Order = { orderId: `order-${index}`, category: CATEGORIES[index % CATEGORIES.length] ?? 'books', amount: 1 + (index % 7), timestamp: FIRST_ORDER + index * 50 };
  return { topic: 'orders', value: JSON.stringify(order) };
}
