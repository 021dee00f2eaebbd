// Contender 2: kafkajs consume → aggregate → transactional produce, with the consumed offsets
// sent to the transaction (the Kafka Streams way), as a user would hand-write it: 5-minute sums
// per category in memory, a per-partition watermark 10 s behind the newest order, each batch's
// closed windows and offsets committed in one transaction.
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { readConfig, ready, report } from './config.js';
import { consumeUntil } from './kafkajs-common.js';

const WINDOW = 300_000;

/**
 * kafkajs does not retry AddOffsetsToTxn when the broker is still finishing the previous
 * transaction (CONCURRENT_TRANSACTIONS), which small, frequent transactions run into.
 */
async function retryConcurrentTransactions(request: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await request();
      return;
    } catch (error) {
      if ((error as { type?: string }).type !== 'CONCURRENT_TRANSACTIONS' || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(20 * 2 ** attempt, 500)));
    }
  }
}
const config = readConfig();
const kafka = new Kafka({ brokers: config.brokers, clientId: 'bench-tx', logLevel: logLevel.NOTHING });
const groupId = `${config.output}-tx`;
const consumer = kafka.consumer({ groupId });
const producer = kafka.producer({
  transactionalId: `${config.output}-tx`,
  idempotent: true,
  maxInFlightRequests: 1,
  createPartitioner: Partitioners.DefaultPartitioner,
});
await Promise.all([consumer.connect(), producer.connect()]);
await consumer.subscribe({ topic: config.input, fromBeginning: true });
ready();

const open = new Map<number, Map<string, { category: string; start: number; amount: number }>>();
const watermarks = new Map<number, number>();
const started = Date.now();
let outputs = 0;
await consumeUntil(
  consumer,
  config.records,
  async (batch) => {
    const windows = open.get(batch.partition) ?? new Map<string, { category: string; start: number; amount: number }>();
    open.set(batch.partition, windows);
    let watermark = watermarks.get(batch.partition) ?? Number.MIN_SAFE_INTEGER;
    for (const message of batch.messages) {
      const order = JSON.parse(message.value?.toString('utf8') ?? '{}') as { category: string; amount: number; timestamp: number };
      const start = Math.floor(order.timestamp / WINDOW) * WINDOW;
      if (start + WINDOW - 1 <= watermark) continue; // late
      const key = `${order.category}@${start}`;
      const window = windows.get(key) ?? { category: order.category, start, amount: 0 };
      window.amount += order.amount;
      windows.set(key, window);
      watermark = Math.max(watermark, order.timestamp - 10_000 - 1);
    }
    watermarks.set(batch.partition, watermark);
    const closed = [...windows.entries()].filter(([, w]) => w.start + WINDOW - 1 <= watermark);
    for (const [key] of closed) windows.delete(key);
    const transaction = await producer.transaction();
    if (closed.length > 0) {
      await transaction.send({
        topic: config.output,
        messages: closed.map(([, w]) => ({ key: w.category, value: JSON.stringify({ category: w.category, windowStart: w.start, windowEnd: w.start + WINDOW, amount: w.amount }) })),
      });
    }
    const last = batch.messages.at(-1);
    if (last) {
      const offsets = { consumerGroupId: groupId, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(Number(last.offset) + 1) }] }] };
      await retryConcurrentTransactions(() => transaction.sendOffsets(offsets));
    }
    await transaction.commit();
    outputs += closed.filter(([, w]) => !w.category.startsWith('closing-')).length;
  },
  false,
);
const elapsedMs = Date.now() - started;
await consumer.disconnect();
await producer.disconnect();
report({ elapsedMs, outputs });
