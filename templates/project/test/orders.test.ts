// The pipeline in Sluice's test harness: in memory, with no broker and no AWS.
import { PipelineTestHarness } from 'sluice/testing';
import { describe, expect, it } from 'vitest';
import pipeline, { OrderDeserializationSchema } from '../pipelines/orders.js';

const order = (orderId: string, category: string, amount: number, timestamp: number) => ({ value: JSON.stringify({ orderId, category, amount, timestamp }) });

describe('orders', () => {
  it('sums each category per 5-minute window once the watermark passes its end', () => {
    const harness = new PipelineTestHarness(pipeline);
    harness.send('orders', [order('o1', 'books', 12, 1_000), order('o2', 'toys', 3, 2_000), order('o3', 'books', 8, 299_999)]);
    expect(harness.outputValues('order-aggregates')).toEqual([]);
    // 5 minutes and the 10 s of out-of-orderness later, the first window closes.
    harness.send('orders', [order('o4', 'books', 1, 310_001)]);
    expect(harness.outputValues('order-aggregates').map((value) => JSON.parse(value) as unknown)).toEqual([
      { category: 'books', windowStart: 0, windowEnd: 300_000, amount: 20 },
      { category: 'toys', windowStart: 0, windowEnd: 300_000, amount: 3 },
    ]);
  });

  it('refuses a record that is not an order, naming what is wrong', () => {
    expect(() => new OrderDeserializationSchema().deserialize(Buffer.from('{"orderId": 1}'))).toThrow('not an order');
  });
});
