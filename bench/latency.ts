// End-to-end latency: orders produced at a steady rate while a contender runs, each output
// timed when a read_committed reader first sees it. A window sum's latency runs from the
// moment its window could close — when every partition has been sent an order 10 s (the
// pipelines' out-of-orderness bound) past the window's end — to its visibility; a copied
// record's, from its own send.
import { CommittedRangeReader, createRecordWriter, KafkaAdmin, partitionForKey, type OutputRecord } from '../lib/kafka/index.js';
import type { ContenderConfig } from './contenders/config.js';
import type { Contender } from './contenders/registry.js';
import { checkOutput, failure, startContender } from './measure.js';
import { benchTopic, closingOrders, expectedSums, orderAt, ORDER_SHAPE, serializeOrder, WINDOW_MS, type OrderOptions } from './orders.js';

/** The pipelines' bound on out-of-orderness: a window closes once an order this far past its end arrives. */
const OUT_OF_ORDERNESS_MS = 10_000;

export interface PacedInputOptions {
  readonly rate: number;
  readonly seconds: number;
  readonly partitions: number;
}

/**
 * How much wall time the paced input spends on one window's event time. Not a divisor of the
 * checkpoint interval: windows then close at every phase of the checkpoint cycle (0.1 s apart
 * over 45 s at 5 s checkpoints), so an exactly-once contender's quantiles do not depend on where
 * in its cycle the windows happened to close.
 */
export const WALL_MS_PER_WINDOW = 900;

/** The paced orders: event time moves one window per {@link WALL_MS_PER_WINDOW} of wall time. */
export function pacedOrders(options: PacedInputOptions): OrderOptions {
  return { ...ORDER_SHAPE, count: options.rate * options.seconds, lateFraction: 0, spacingMs: (WINDOW_MS * 1_000) / (options.rate * WALL_MS_PER_WINDOW) };
}

export interface SentInput {
  /** Wall time each order was handed to the producer, by index; the closing orders follow. */
  readonly sentAt: number[];
  readonly startedAt: number;
  /** When the window ending at `windowEnd` could close (ms since the epoch). */
  closableAt(windowEnd: number): number;
}

/** Produces the orders at `rate` a second, then one closing order per partition. */
export async function producePaced(brokers: string[], topic: string, input: PacedInputOptions, orders: OrderOptions): Promise<SentInput> {
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers });
  const sentAt: number[] = [];
  const timestamps: number[] = [];
  const partitionOf: number[] = [];
  const startedAt = Date.now();
  let index = 0;
  while (index < orders.count) {
    const due = Math.min(orders.count, Math.floor(((Date.now() - startedAt) / 1_000) * input.rate));
    const batch: OutputRecord[] = [];
    const now = Date.now();
    for (; index < due; index++) {
      const order = orderAt(index, orders);
      batch.push({ topic, key: order.category, value: serializeOrder(order, orders.recordBytes) });
      sentAt.push(now);
      timestamps.push(order.timestamp);
      partitionOf.push(partitionForKey(order.category, input.partitions));
    }
    if (batch.length > 0) await writer.write(batch);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const closing = closingOrders(topic, input.partitions, orders);
  const closedAt = Date.now();
  await writer.write(closing.map(({ record }) => record));
  for (const { partition, timestamp } of closing) {
    sentAt.push(closedAt);
    timestamps.push(timestamp);
    partitionOf.push(partition);
  }
  await writer.flush();
  await writer.close();

  // Per partition, the send time of the first order that moved its newest timestamp past each window end + bound.
  const closable = new Map<number, number>();
  const newest = new Array<number>(input.partitions).fill(Number.MIN_SAFE_INTEGER);
  const firstEnd = Math.floor((timestamps[0] ?? 0) / WINDOW_MS) * WINDOW_MS + WINDOW_MS;
  const nextEnd = new Array<number>(input.partitions).fill(firstEnd);
  for (let i = 0; i < timestamps.length; i++) {
    const p = partitionOf[i] ?? 0;
    newest[p] = Math.max(newest[p] ?? 0, timestamps[i] ?? 0);
    while ((nextEnd[p] ?? 0) + OUT_OF_ORDERNESS_MS <= (newest[p] ?? 0)) {
      const end = nextEnd[p] ?? 0;
      closable.set(end, Math.max(closable.get(end) ?? 0, sentAt[i] ?? 0));
      nextEnd[p] = end + WINDOW_MS;
    }
  }
  return {
    sentAt,
    startedAt,
    closableAt: (windowEnd) => closable.get(windowEnd) ?? closedAt,
  };
}

/** Reads a topic with read_committed as it fills, noting when each record first became visible. */
export class VisibilityTail {
  private readonly reader: CommittedRangeReader;
  private readonly positions: number[];
  readonly seen: { value: string; at: number }[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    brokers: string[],
    private readonly topic: string,
    partitions: number,
  ) {
    this.reader = new CommittedRangeReader({ brokers });
    this.positions = new Array<number>(partitions).fill(0);
    this.loop = this.poll();
  }

  private async poll(): Promise<void> {
    while (!this.stopped) {
      for (let partition = 0; partition < this.positions.length; partition++) {
        const { records, next } = await this.reader.readAvailable(this.topic, partition, this.positions[partition] ?? 0, 10_000);
        const at = Date.now();
        this.positions[partition] = next;
        for (const record of records) this.seen.push({ value: record.value?.toString('utf8') ?? '', at });
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.reader.close();
  }
}

export interface LatencyFigures {
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Latencies of what the tail saw, leaving out outputs whose input was sent during the warm-up. */
export function latencies(input: SentInput, seen: VisibilityTail['seen'], sums: boolean, warmupMs: number): LatencyFigures {
  const after = input.startedAt + warmupMs;
  const samples: number[] = [];
  for (const { value, at } of seen) {
    const output = JSON.parse(value) as { category: string; windowStart?: number; orderId?: string };
    if (output.category.startsWith('closing-')) continue;
    const from = sums ? input.closableAt((output.windowStart ?? 0) + WINDOW_MS) : (input.sentAt[Number(output.orderId?.slice(2))] ?? at);
    if (from >= after) samples.push(at - from);
  }
  samples.sort((a, b) => a - b);
  const quantile = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? Number.NaN;
  return { samples: samples.length, p50: quantile(0.5), p99: quantile(0.99), max: samples.at(-1) ?? Number.NaN };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts the contender on fresh topics, produces the paced orders once it is READY, and times
 * its outputs until all are visible (or a minute after the last order); then stops it.
 */
export async function measureLatency(
  contender: Contender,
  config: Pick<ContenderConfig, 'brokers' | 'guarantee' | 'outputCommit' | 'checkpointIntervalMs' | 'batchSize'> & { readonly topicSuffix: string },
  paced: PacedInputOptions,
  warmupMs: number,
): Promise<LatencyFigures & { readonly check: string }> {
  const { brokers } = config;
  const orders = pacedOrders(paced);
  const expected = expectedSums(orders);
  const inputRecords = orders.count + paced.partitions;
  const [input, output] = [`bench-paced-${config.topicSuffix}`, `bench-paced-out-${config.topicSuffix}`];
  const admin = new KafkaAdmin({ brokers });
  await admin.ensureTopics([input, output].map((topic) => benchTopic(topic, paced.partitions)));
  const running = startContender(contender, {
    ...config,
    input,
    output,
    partitions: paced.partitions,
    records: inputRecords,
    expectedWindows: expected.size,
    paced: true,
  });
  try {
    await Promise.race([running.ready, sleep(120_000)]);
    const tail = new VisibilityTail(brokers, output, paced.partitions);
    const sent = await producePaced(brokers, input, paced, orders);
    const wanted = contender.sums ? expected.size : inputRecords;
    const visible = () => (contender.sums ? tail.seen.filter(({ value }) => !value.includes('"closing-')).length : tail.seen.length);
    for (const deadline = Date.now() + 60_000; visible() < wanted && Date.now() < deadline; ) await sleep(100);
    await tail.stop();
    if (contender.stopsWhenPaced) await Promise.race([running.exited, sleep(10_000)]);
    running.stop();
    const { output: printed } = await running.exited;
    const verdict = await checkOutput(brokers, contender, output, expected, inputRecords);
    const check = verdict.startsWith('exact') || verdict.startsWith('all') ? verdict : `${verdict}; ${failure(printed)}`;
    return { ...latencies(sent, tail.seen, contender.sums, warmupMs), check };
  } finally {
    running.stop();
    await admin.deleteTopics([input, output]).catch(() => undefined);
    await admin.close();
  }
}
