// The seed pipeline in Avro: orders and aggregates in Confluent's wire format, their schemas in
// a schema registry (SCHEMA_REGISTRY_URL, by default the local one `npm run registry:start` runs;
// deployed, `--param schemaRegistryUrl=… --param schemaRegistrySecretArn=…`).
//   avro-orders (Avro shop.Order, any key) → keyBy category → 5-minute tumbling event-time
//   windows → sum('amount') → avro-order-aggregates (Avro shop.OrderAggregate, subject
//   avro-order-aggregates-value), EXACTLY_ONCE: order-aggregation.ts with other formats.
// Orders are read with ORDER_SCHEMA, the newest; orders written with ORDER_SCHEMA_V1, before
// `channel` was added, read with its default. Run it with
//   npx sluice offline examples/order-aggregation-avro.ts --schema-registry --generate 2000
import {
  ConfluentRegistryAvroDeserializationSchema,
  ConfluentRegistryAvroSerializationSchema,
  SubjectNameStrategy,
  schemaRegistryFromEnvironment,
  type AvroSchema,
} from 'sluice';
import { generateOrder, orderAggregation, type Order as JsonOrder, type OrderAggregate } from './order-aggregation.js';

/** An order as this pipeline reads it: the newest schema's fields. */
export interface Order extends JsonOrder {
  /** Where the order was placed; orders written before the field existed read as 'web'. */
  readonly channel: string;
}

const ORDER_FIELDS = [
  { name: 'orderId', type: 'string' },
  { name: 'category', type: 'string' },
  { name: 'amount', type: 'double' },
  { name: 'timestamp', type: { type: 'long', logicalType: 'timestamp-millis' } },
];

/** The orders' first schema. */
export const ORDER_SCHEMA_V1: AvroSchema = { type: 'record', name: 'Order', namespace: 'shop', fields: ORDER_FIELDS };

/** The orders' schema now: `channel` added with a default, a backward-compatible change. */
export const ORDER_SCHEMA: AvroSchema = {
  type: 'record',
  name: 'Order',
  namespace: 'shop',
  fields: [...ORDER_FIELDS, { name: 'channel', type: 'string', default: 'web' }],
};

export const AGGREGATE_SCHEMA: AvroSchema = {
  type: 'record',
  name: 'OrderAggregate',
  namespace: 'shop',
  fields: [
    { name: 'category', type: 'string' },
    { name: 'windowStart', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'windowEnd', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'amount', type: 'double' },
  ],
};

/** SCHEMA_REGISTRY_URL, with credentials from SCHEMA_REGISTRY_SECRET_ARN where a deployment gives them; else the local registry. */
export const SCHEMA_REGISTRY = schemaRegistryFromEnvironment({ defaultUrl: 'http://127.0.0.1:8081/apis/ccompat/v7' });
const namespace = process.env.ORDER_AGGREGATION_NAMESPACE ?? '';
export const ORDERS_TOPIC = `${namespace}avro-orders`;
export const AGGREGATES_TOPIC = `${namespace}avro-order-aggregates`;

export default orderAggregation({
  name: 'order-aggregation-avro',
  partitionedByCategory: false,
  formats: {
    ordersTopic: ORDERS_TOPIC,
    aggregatesTopic: AGGREGATES_TOPIC,
    orders: ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, SCHEMA_REGISTRY),
    aggregates: ConfluentRegistryAvroSerializationSchema.forSpecific<OrderAggregate>(
      SubjectNameStrategy.topicName(AGGREGATES_TOPIC),
      AGGREGATE_SCHEMA,
      SCHEMA_REGISTRY,
    ),
  },
});

const CHANNELS = ['web', 'app', 'store'];

/** Order number `index` in the newest schema: the JSON seed's order, with a channel. */
export function generateAvroOrder(index: number): Order {
  return { ...generateOrder(index), channel: CHANNELS[index % CHANNELS.length] ?? 'web' };
}

/** Writes orders as a producer with Confluent's serializer would, registering ORDER_SCHEMA under `avro-orders-value`. */
export const orderSerializer = ConfluentRegistryAvroSerializationSchema.forSpecific<Order>(
  SubjectNameStrategy.topicName(ORDERS_TOPIC),
  ORDER_SCHEMA,
  SCHEMA_REGISTRY,
);

/** Order number `index` for `sluice offline --generate`, in Avro, without a key. */
export async function generateInput(index: number) {
  await orderSerializer.open();
  return { topic: ORDERS_TOPIC, value: orderSerializer.serialize(generateAvroOrder(index)) };
}
