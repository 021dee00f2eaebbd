import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import seed, { WINDOW_SIZE, type OrderAggregate } from '../../../examples/order-aggregation.js';
import inPlace from '../../../examples/order-aggregation-in-place.js';
import { loadSqlPipeline } from '../../../lib/sql/pipeline-file.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';
import { expectedTotals, generateOrders } from '../../helpers/orders.js';

const PARTITIONS = 4;

function partitionOf(category: string): number {
  let hash = 0;
  for (const char of category) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % PARTITIONS;
}

const variants = [
  // Orders on any partition, without a key: the keyBy repartitions, and each order is read twice.
  { name: 'order-aggregation.ts, unkeyed orders on any partition', pipeline: seed, keyed: false, readsPerOrder: 2 },
  { name: 'order-aggregation-in-place.ts, orders keyed by category', pipeline: inPlace, keyed: true, readsPerOrder: 1 },
  // The same job in Flink SQL: its window aggregation repartitions by category, as the keyBy does.
  { name: 'order-aggregation.sql, unkeyed orders on any partition', pipeline: loadSqlPipeline(fileURLToPath(new URL('../../../examples/order-aggregation.sql', import.meta.url))), keyed: false, readsPerOrder: 2 },
];

describe('the seed pipeline (examples/order-aggregation.ts and its in-place variant)', () => {
  it.each(variants)('$name: sums 100,000 shuffled orders with late ones into exactly the expected 5-minute category totals', ({ pipeline, keyed, readsPerOrder }) => {
    const orders = generateOrders({ count: 100_000 });
    const lateOrders = orders.filter((order) => order.late).length;
    expect(lateOrders).toBeGreaterThan(100);

    const harness = new PipelineTestHarness(pipeline, { sourcePartitions: { orders: [0, 1, 2, 3] } });
    for (let start = 0; start < orders.length; start += 1_000) {
      const batch = orders.slice(start, start + 1_000).map(({ late: _late, ...order }, index) => ({
        ...(keyed ? { key: order.category } : {}),
        value: JSON.stringify(order),
        partition: keyed ? partitionOf(order.category) : (start + index) % PARTITIONS,
      }));
      harness.send('orders', batch);
    }
    harness.finish();

    const written = harness.output('order-aggregates');
    const aggregates = written.map((record) => JSON.parse(record.value?.toString() ?? '') as OrderAggregate);
    const actual = new Map(aggregates.map((a) => [`${a.category}@${a.windowStart}`, a.amount]));
    expect(actual.size).toBe(aggregates.length);
    expect(actual).toEqual(expectedTotals(orders, WINDOW_SIZE));
    for (const [index, aggregate] of aggregates.entries()) {
      expect(aggregate.windowEnd - aggregate.windowStart).toBe(WINDOW_SIZE);
      expect(written[index]?.key?.toString()).toBe(aggregate.category);
    }
    expect(harness.metrics()).toMatchObject({ recordsIn: 100_000 * readsPerOrder, lateRecordsDropped: lateOrders });
  });
});
