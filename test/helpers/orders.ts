// A reproducible stream of orders for tests and benchmarks, and a straightforward
// computation of the 5-minute totals that the seed pipeline must produce.
import { partitionForKey } from '../../lib/kafka/partitioning.js';
export interface GeneratedOrder {
  readonly orderId: string;
  readonly category: string;
  readonly amount: number;
  readonly timestamp: number;
  /** Too late for its window whatever the batching (see generateOrders). */
  readonly late: boolean;
}

/** mulberry32: a small, seeded, deterministic generator. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface OrderStreamOptions {
  readonly count: number;
  readonly seed?: number;
  readonly categories?: number;
  readonly start?: number;
  /** Mean milliseconds between orders. */
  readonly spacingMs?: number;
  /** How far behind real time an on-time order may be stamped; below the pipeline's bound. */
  readonly jitterMs?: number;
  readonly lateFraction?: number;
}

/**
 * Orders whose timestamps trail a steadily advancing clock by up to `jitterMs` (shuffled, but
 * within the out-of-orderness bound), plus a fraction of late orders stamped 6 minutes
 * behind the clock of 1,500 orders earlier: with batches of at most 1,000 records, the
 * watermark has passed their whole window before they arrive, however the input is cut.
 */
/**
 * A day before the current hour: orders stamped from here on, and the totals the pipelines
 * stamp with their windows' times, are well inside a topic's default 7-day retention and its
 * 1-hour limit on future timestamps, whichever day the tests run.
 */
export const RECENT_START = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 86_400_000;

export function generateOrders({
  count,
  seed = 42,
  categories = 7,
  start = RECENT_START,
  spacingMs = 50,
  jitterMs = 9_000,
  lateFraction = 0.005,
}: OrderStreamOptions): GeneratedOrder[] {
  const random = seededRandom(seed);
  const orders: GeneratedOrder[] = [];
  for (let i = 0; i < count; i++) {
    const clock = start + i * spacingMs;
    const late = i >= 2_000 && random() < lateFraction;
    const timestamp = late ? start + (i - 1_500) * spacingMs - 360_000 : clock - Math.floor(random() * jitterMs);
    orders.push({
      orderId: `o-${i}`,
      category: `category-${Math.floor(random() * categories)}`,
      amount: 1 + Math.floor(random() * 500),
      timestamp,
      late,
    });
  }
  return orders;
}

/**
 * One order for each of the first `partitions` categories, an hour after the last of
 * `orders`, worth nothing: it moves every partition's watermark past every window, so that
 * an unbounded pipeline writes all its totals.
 */
export function closingOrders(orders: readonly GeneratedOrder[], partitions: number): GeneratedOrder[] {
  const timestamp = (orders.at(-1)?.timestamp ?? 0) + 3_600_000;
  return Array.from({ length: partitions }, (_, p) => ({
    orderId: `closing-${p}`,
    category: `category-${p}`,
    amount: 0,
    timestamp,
    late: false,
  }));
}

/** The expected totals, keyed `category@windowStart`, computed by a plain loop. */
export function expectedTotals(orders: readonly GeneratedOrder[], windowMs: number): Map<string, number> {
  const totals = new Map<string, number>();
  for (const order of orders) {
    if (order.late) continue;
    const windowStart = Math.floor(order.timestamp / windowMs) * windowMs;
    const key = `${order.category}@${windowStart}`;
    totals.set(key, (totals.get(key) ?? 0) + order.amount);
  }
  return totals;
}

/** An order worth nothing an hour after the rest on every partition, keyed so that Kafka's default partitioner puts it there: all windows close. */
export function closingOrdersOnEveryPartition(after: readonly GeneratedOrder[], partitions: number): GeneratedOrder[] {
  const timestamp = (after.at(-1)?.timestamp ?? 0) + 3_600_000;
  const closing: GeneratedOrder[] = [];
  for (let i = 0; closing.length < partitions; i++) {
    const category = `closing-${i}`;
    if (partitionForKey(category, partitions) === closing.length) closing.push({ orderId: category, category, amount: 0, timestamp, late: false });
  }
  return closing;
}
