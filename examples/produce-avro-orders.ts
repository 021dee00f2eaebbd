// Writes Avro orders to the Avro example's topic in Confluent's wire format, as a producer with
// Confluent's KafkaAvroSerializer would: the schema registered under `avro-orders-value`, its id
// in each record. `--schema v1` writes the first schema, without `channel`, so that a run can
// evolve the schema mid-stream:
//   npx tsx examples/produce-avro-orders.ts --count 1000 --schema v1
//   npx tsx examples/produce-avro-orders.ts --count 1000 --from 1000
// KAFKA_BROKERS and SCHEMA_REGISTRY_URL as for the pipeline.
import { parseArgs } from 'node:util';
import { createRecordWriter } from 'sluice/kafka';
import { ConfluentRegistryAvroSerializationSchema, SubjectNameStrategy } from 'sluice';
import { generateAvroOrder, ORDER_SCHEMA_V1, orderSerializer, ORDERS_TOPIC, SCHEMA_REGISTRY } from './order-aggregation-avro.js';

const { values } = parseArgs({
  options: { count: { type: 'string', default: '1000' }, from: { type: 'string', default: '0' }, schema: { type: 'string', default: 'v2' } },
});
const count = Number(values.count);
const from = Number(values.from);
if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(from) || from < 0) {
  throw new Error('--count takes a whole number ≥ 1 and --from a whole number ≥ 0');
}
if (values.schema !== 'v1' && values.schema !== 'v2') throw new Error('--schema takes v1 (without channel) or v2');

const serializer =
  values.schema === 'v1'
    ? ConfluentRegistryAvroSerializationSchema.forSpecific(SubjectNameStrategy.topicName(ORDERS_TOPIC), ORDER_SCHEMA_V1, SCHEMA_REGISTRY)
    : orderSerializer;
await serializer.open();
const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',') });
const orders = Array.from({ length: count }, (_, i) => generateAvroOrder(from + i));
await writer.write(orders.map((order) => ({ topic: ORDERS_TOPIC, key: order.category, value: serializer.serialize(order) })));
await writer.flush();
await writer.close();
process.stdout.write(`Wrote ${count} Avro orders (schema ${values.schema}) to ${ORDERS_TOPIC}\n`);
