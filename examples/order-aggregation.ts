// The seed pipeline: 5-minute order totals per category, exactly once.
//   orders (JSON {orderId, category, amount, timestamp}, keyed any way or not at all)
//   → keyBy category → 5-minute tumbling event-time windows, 10 s out-of-orderness
//   → sum('amount') → order-aggregates (JSON {category, windowStart, windowEnd, amount}),
//   EXACTLY_ONCE.
// The keyBy repartitions, as Flink's keyBy shuffles: two stages, joined by a repartition topic.
// order-aggregation-in-place.ts is the same job for producers that key orders by category.
// ORDER_AGGREGATION_NAMESPACE, when set, prefixes every name (pipeline, topics, consumer group,
// transactional ids) so that several copies can share one cluster, as the tests do.
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
  type DeserializationSchema,
  type ElementContext,
  type SerializationSchema,
} from 'sluice';

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
const namespace = process.env.ORDER_AGGREGATION_NAMESPACE ?? '';
export const ORDERS_TOPIC = `${namespace}orders`;
export const AGGREGATES_TOPIC = `${namespace}order-aggregates`;

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

export interface OrderAggregationOptions {
  /** Names the pipeline: its state, its repartition topic, its functions, and its consumer group and transactional ids. */
  readonly name: string;
  /**
   * Every producer keys its orders by category with Kafka's default partitioner, so all of a
   * category's orders are in one partition: the windows then run where the orders are read,
   * with no repartition topic, in one stage. An order on another partition than its key's
   * fails its batch (docs/api.md, "Keys, stages and repartition topics").
   */
  readonly partitionedByCategory: boolean;
  /** The topics, and how orders are read and aggregates written there: JSON on ORDERS_TOPIC and AGGREGATES_TOPIC by default. */
  readonly formats?: OrderFormats;
}

export interface OrderFormats {
  readonly ordersTopic: string;
  readonly aggregatesTopic: string;
  readonly orders: DeserializationSchema<Order>;
  readonly aggregates: SerializationSchema<OrderAggregate>;
}

const JSON_FORMATS: OrderFormats = {
  ordersTopic: ORDERS_TOPIC,
  aggregatesTopic: AGGREGATES_TOPIC,
  orders: new JsonDeserializationSchema(parseOrder),
  aggregates: { serialize: (aggregate) => JSON.stringify(aggregate) },
};

export function orderAggregation({ name, partitionedByCategory, formats = JSON_FORMATS }: OrderAggregationOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({ name: `${namespace}${name}` });
  env.enableCheckpointing(seconds(60));

  const source = KafkaSource.builder<Order>()
    .setBootstrapServers(brokers)
    .setTopics(formats.ordersTopic)
    .setGroupId(`${namespace}${name}`)
    .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
    .setValueOnlyDeserializer(formats.orders)
    .setPartitionedByRecordKey(partitionedByCategory)
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
            .setTopic(formats.aggregatesTopic)
            .setKeySerializationSchema((aggregate) => aggregate.category)
            .setValueSerializationSchema(formats.aggregates)
            .build(),
        )
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(`${namespace}${name}-tx`)
        .build(),
    )
    .name('Order Aggregates Sink');
  return env;
}

export default orderAggregation({ name: 'order-aggregation', partitionedByCategory: false });

const CATEGORIES = ['books', 'games', 'garden', 'kitchen', 'music', 'sports', 'tools', 'toys'];
/** The generated orders start at the hour the generator first ran, so the broker's retention keeps them. */
const FIRST_ORDER = Math.floor(Date.now() / 3_600_000) * 3_600_000;

/** A stable pseudo-random number in [0, 1) for order `index` and a purpose. */
function noise(index: number, purpose: number): number {
  let h = Math.imul(index ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(purpose + 1, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 4_294_967_296;
}

/** Order number `index`: event time advances 50 ms an order, each stamped up to 9 s early (within the 10 s out-of-orderness). */
export function generateOrder(index: number): Order {
  return {
    orderId: `order-${index}`,
    category: CATEGORIES[Math.floor(noise(index, 0) * CATEGORIES.length)] ?? 'books',
    amount: 1 + Math.floor(noise(index, 1) * 500),
    timestamp: FIRST_ORDER + index * 50 - Math.floor(noise(index, 2) * 9_000),
  };
}

/**
 * Order number `index` for `sluice offline --generate`, without a key: the producer spreads the
 * orders over the partitions, and the keyBy brings each category together. At 2,000 orders a
 * second, a 5-minute window closes every 3 s.
 */
export function generateInput(index: number) {
  return { topic: ORDERS_TOPIC, value: JSON.stringify(generateOrder(index)) };
}
