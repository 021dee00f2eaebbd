// The seed pipeline: 5-minute order totals per category, exactly once.
//   orders (JSON {orderId, category, amount, timestamp}) → keyBy category
//   → 5-minute tumbling event-time windows, 10 s out-of-orderness → sum('amount')
//   → order-aggregates (JSON {category, windowStart, windowEnd, amount}), EXACTLY_ONCE.
import {
  DeliveryGuarantee,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  minutes,
  OffsetResetStrategy,
  OffsetsInitializer,
  seconds,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type ElementContext,
} from '../lib/api/index.js';

export interface Order {
  readonly orderId: string;
  readonly category: string;
  readonly amount: number;
  /** Epoch milliseconds. */
  readonly timestamp: number;
}

export interface OrderAggregate {
  readonly category: string;
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly amount: number;
}

export const WINDOW_SIZE = minutes(5);
const brokers = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';

/** Accepts only well-formed orders; anything else is a bad record, named with its position. */
export function parseOrder(value: unknown): Order {
  const order = value as Partial<Order> | null;
  if (
    typeof order?.orderId !== 'string' ||
    typeof order.category !== 'string' ||
    typeof order.amount !== 'number' ||
    typeof order.timestamp !== 'number'
  ) {
    throw new Error(`not an order {orderId, category, amount, timestamp}: ${JSON.stringify(value)}`);
  }
  return { orderId: order.orderId, category: order.category, amount: order.amount, timestamp: order.timestamp };
}

/** A window result carries the window's last millisecond as its timestamp, as in Flink. */
function toAggregate(total: Order, { timestamp }: ElementContext): OrderAggregate {
  const windowEnd = (timestamp ?? 0) + 1;
  return { category: total.category, windowStart: windowEnd - WINDOW_SIZE, windowEnd, amount: total.amount };
}

const env = StreamExecutionEnvironment.create({ name: 'order-aggregation' });
env.enableCheckpointing(seconds(60));

const source = KafkaSource.builder<Order>()
  .setBootstrapServers(brokers)
  .setTopics('orders')
  .setGroupId('order-processor')
  .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
  .setValueOnlyDeserializer(new JsonDeserializationSchema(parseOrder))
  // The order producers key each record by its category, so state stays with the partition.
  .setPartitionedByRecordKey()
  .build();

env
  .fromSource(
    source,
    WatermarkStrategy.forBoundedOutOfOrderness<Order>(seconds(10)).withTimestampAssigner((order) => order.timestamp),
    'Order Source',
  )
  .keyBy((order) => order.category)
  .window(TumblingEventTimeWindows.of(WINDOW_SIZE))
  .sum('amount')
  .name('category-totals')
  .map(toAggregate)
  .name('to-aggregate')
  .sinkTo(
    KafkaSink.builder<OrderAggregate>()
      .setBootstrapServers(brokers)
      .setRecordSerializer(
        KafkaRecordSerializationSchema.builder<OrderAggregate>()
          .setTopic('order-aggregates')
          .setKeySerializationSchema((aggregate) => aggregate.category)
          .setValueSerializationSchema({ serialize: (aggregate) => JSON.stringify(aggregate) })
          .build(),
      )
      .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
      .setTransactionalIdPrefix('order-agg-tx')
      .build(),
  )
  .name('Order Aggregates Sink');

export default env;

const CATEGORIES = ['books', 'games', 'garden', 'kitchen', 'music', 'sports', 'tools', 'toys'];
const FIRST_ORDER = Date.UTC(2026, 0, 1);

/** A stable pseudo-random number in [0, 1) for order `index` and a purpose. */
function noise(index: number, purpose: number): number {
  let h = Math.imul(index ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(purpose + 1, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 4_294_967_296;
}

/**
 * Order number `index`, for `sluice offline --generate`: event time advances 50 ms an order
 * (at 2,000 orders a second, a 5-minute window closes every 3 s), each stamped up to 9 s early
 * (within the 10 s out-of-orderness), keyed by category as the order producers do.
 */
export function generateInput(index: number) {
  const order: Order = {
    orderId: `order-${index}`,
    category: CATEGORIES[Math.floor(noise(index, 0) * CATEGORIES.length)] ?? 'books',
    amount: 1 + Math.floor(noise(index, 1) * 500),
    timestamp: FIRST_ORDER + index * 50 - Math.floor(noise(index, 2) * 9_000),
  };
  return { topic: 'orders', key: order.category, value: JSON.stringify(order) };
}
