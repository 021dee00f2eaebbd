// The seed job for order producers that key each order by its category with Kafka's default
// partitioner: the windows run where the orders are read, in one stage, with no repartition
// topic. setPartitionedByRecordKey() declares that contract; an order whose key is not its
// category, or that sits on another partition than its key's, fails its batch with an error
// naming it. When producers cannot promise that, use order-aggregation.ts, whose keyBy repartitions.
import { generateOrder, ORDERS_TOPIC, orderAggregation } from './order-aggregation.js';

export default orderAggregation({ name: 'order-aggregation-in-place', partitionedByCategory: true });

/** Order number `index` for `sluice offline --generate`, keyed by its category as the contract asks. */
export function generateInput(index: number) {
  const order = generateOrder(index);
  return { topic: ORDERS_TOPIC, key: order.category, value: JSON.stringify(order) };
}
