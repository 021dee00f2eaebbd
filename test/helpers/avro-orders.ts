// The order-totals pipeline's formats in Avro against a schema registry, for the fault schedules:
// orders written in two schema versions (the second adds a field with a default, mid-stream),
// totals written and read back in Avro.
import {
  ConfluentRegistryAvroDeserializationSchema,
  ConfluentRegistryAvroSerializationSchema,
  SubjectNameStrategy,
} from '../../lib/formats/index.js';
import { ORDER_SCHEMA, ORDER_SCHEMA_V1 } from '../../examples/order-aggregation-avro.js';
import type { Order, OrderTotalsOptions, Total } from './pipelines.js';

export const TOTAL_SCHEMA = {
  type: 'record',
  name: 'Total',
  namespace: 'sluice.test',
  fields: [
    { name: 'category', type: 'string' },
    { name: 'windowStart', type: 'long' },
    { name: 'amount', type: 'double' },
  ],
};

export interface AvroOrders {
  readonly formats: NonNullable<OrderTotalsOptions['formats']>;
  /** Order `index` of `count` in the wire format: the first half in the first schema, the rest in the second. */
  encode(order: Order, index: number, count: number): Buffer;
  decodeTotals(values: readonly (Buffer | null)[]): Promise<Total[]>;
}

export async function avroOrders(registry: string, input: string, output: string): Promise<AvroOrders> {
  const subject = SubjectNameStrategy.topicName(input);
  const first = ConfluentRegistryAvroSerializationSchema.forSpecific<Order>(subject, ORDER_SCHEMA_V1, registry);
  const second = ConfluentRegistryAvroSerializationSchema.forSpecific<Order & { channel: string }>(subject, ORDER_SCHEMA, registry);
  await first.open();
  await second.open();
  const totals = ConfluentRegistryAvroDeserializationSchema.forSpecific<Total>(TOTAL_SCHEMA, registry);
  return {
    formats: {
      orders: ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry),
      totals: ConfluentRegistryAvroSerializationSchema.forSpecific<Total>(SubjectNameStrategy.topicName(output), TOTAL_SCHEMA, registry),
    },
    encode: (order, index, count) => (index < count / 2 ? first.serialize(order) : second.serialize({ ...order, channel: index % 2 === 0 ? 'app' : 'store' })),
    async decodeTotals(values) {
      await totals.prepare(values);
      return values.map((value) => ({ ...totals.deserialize(value) }));
    },
  };
}
