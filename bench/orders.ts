// The benchmark's order generator: seeded and reproducible, with configurable categories,
// out-of-orderness, late fraction and record size; writes pre-loaded input to the broker.
import { createRecordWriter, partitionForKey, type KafkaConnectionOptions, type OutputRecord, type TopicSpec } from '../lib/kafka/index.js';

export interface OrderOptions {
  readonly count: number;
  readonly seed: number;
  readonly categories: number;
  /** How far behind the event clock an on-time order may be stamped (below the pipelines' 10 s bound). */
  readonly outOfOrdernessMs: number;
  /** Orders stamped a window behind: late for every contender, dropped by all. */
  readonly lateFraction: number;
  /** Each record's JSON is padded to this many bytes. */
  readonly recordBytes: number;
  /** Event time between consecutive orders. */
  readonly spacingMs: number;
}

export interface BenchOrder {
  readonly orderId: string;
  readonly category: string;
  readonly amount: number;
  readonly timestamp: number;
  readonly late: boolean;
}

export const WINDOW_MS = 300_000;

/** The orders every benchmark loads, but for their count and late fraction. */
export const ORDER_SHAPE = { seed: 7, categories: 20, outOfOrdernessMs: 8_000, recordBytes: 256, spacingMs: 50 } as const;

/**
 * A benchmark topic, kept whatever its records' timestamps: window sums carry their window's
 * event time (in January 2026), and the broker's 7-day time retention would otherwise delete
 * them before they are checked.
 */
export function benchTopic(topic: string, partitions: number): TopicSpec {
  return { topic, partitions, configs: { 'retention.ms': '-1' } };
}
const START = Date.UTC(2026, 0, 1);

/** A uniform draw in [0, 1) from the seed, the item's index and the draw's purpose: any item is made alone. */
export function random(seed: number, index: number, purpose: number): number {
  let h = Math.imul(seed ^ 0x2545f491, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b) ^ Math.imul(purpose + 7, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 4_294_967_296;
}

export function orderAt(index: number, options: OrderOptions): BenchOrder {
  const late = index > 20_000 && random(options.seed, index, 0) < options.lateFraction;
  const clock = START + Math.round(index * options.spacingMs);
  return {
    orderId: `o-${index}`,
    category: `category-${Math.floor(random(options.seed, index, 1) * options.categories)}`,
    amount: 1 + Math.floor(random(options.seed, index, 2) * 500),
    timestamp: late ? clock - 2 * WINDOW_MS : clock - Math.floor(random(options.seed, index, 3) * options.outOfOrdernessMs),
    late,
  };
}

export function serializeOrder(order: BenchOrder, recordBytes: number): string {
  const json = JSON.stringify({ orderId: order.orderId, category: order.category, amount: order.amount, timestamp: order.timestamp, pad: '' });
  return json.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, recordBytes - json.length))}"`);
}

/** The 5-minute sums every contender must write, by `category@windowStart`. */
export function expectedSums(options: OrderOptions): Map<string, number> {
  const sums = new Map<string, number>();
  for (let i = 0; i < options.count; i++) {
    const order = orderAt(i, options);
    if (order.late) continue;
    const key = `${order.category}@${Math.floor(order.timestamp / WINDOW_MS) * WINDOW_MS}`;
    sums.set(key, (sums.get(key) ?? 0) + order.amount);
  }
  return sums;
}

/**
 * On every partition an order an hour after the last one, worth nothing (category
 * `closing-*`): it closes every window for pipelines that never see the end of their input.
 */
export function closingOrders(topic: string, partitions: number, options: OrderOptions): { record: OutputRecord; partition: number; timestamp: number }[] {
  const timestamp = START + Math.round(options.count * options.spacingMs) + 3_600_000;
  const closing: { record: OutputRecord; partition: number; timestamp: number }[] = [];
  for (let i = 0; closing.length < partitions; i++) {
    const category = `closing-${i}`;
    if (partitionForKey(category, partitions) !== closing.length) continue;
    const order = { orderId: category, category, amount: 0, timestamp, late: false };
    closing.push({ record: { topic, key: category, value: serializeOrder(order, options.recordBytes) }, partition: closing.length, timestamp });
  }
  return closing;
}

/** Writes the orders keyed by category, then the closing orders. */
export async function loadOrders(kafka: KafkaConnectionOptions, topic: string, partitions: number, options: OrderOptions): Promise<void> {
  const writer = createRecordWriter('AT_LEAST_ONCE', kafka);
  // Writes of 2,000 orders stay under the broker's 1 MB batch limit even on a single partition.
  for (let start = 0; start < options.count; start += 2_000) {
    const batch: OutputRecord[] = [];
    for (let i = start; i < Math.min(options.count, start + 2_000); i++) {
      const order = orderAt(i, options);
      batch.push({ topic, key: order.category, value: serializeOrder(order, options.recordBytes) });
    }
    await writer.write(batch);
  }
  await writer.write(closingOrders(topic, partitions, options).map(({ record }) => record));
  await writer.flush();
  await writer.close();
}
