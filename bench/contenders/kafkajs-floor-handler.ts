// The floor that bench/handler.ts measures Sluice's processor handler against: the bench
// pipeline's work for one batch of one partition, written by hand for this pipeline alone.
// It decodes the event, sums each category's 5-minute windows, reads the batch's categories
// (and those with a window to close) and the partition's progress in one BatchGetItem, writes
// each changed category and the progress with a PutItem, and writes the sums of the windows the
// batch's watermark closes in one kafkajs transaction. Nothing fences a zombie, nothing
// checkpoints, and a crash between the transaction and the writes sends a window twice: what
// Sluice's guarantee and generality cost is the difference.
import { BatchGetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { BENCH_OUT_OF_ORDERNESS_MS } from '../pipeline.js';
import { requestListener, type KafkaRequestSpan } from '../../lib/kafka/index.js';
import { WINDOW_MS } from '../orders.js';

interface Progress {
  offset: number;
  watermark: number;
  /** The window starts each category still has open: the windows to close as the watermark passes them. */
  open: Record<string, number[]>;
}

type Windows = Record<string, number>;

export interface FloorHandlerOptions {
  readonly brokers: readonly string[];
  readonly client: DynamoDBDocumentClient;
  /** A table keyed by `pk` and `sk` (strings), as Sluice's state table. */
  readonly tableName: string;
  readonly output: string;
  readonly transactionalId: string;
  /** Called with each request to a broker, for the bench's model of the critical path. */
  readonly onRequest?: (request: KafkaRequestSpan) => void;
}

export interface FloorHandler {
  readonly handle: (event: MSKEvent) => Promise<void>;
  readonly close: () => Promise<void>;
}

const PROGRESS = '#progress';

export async function startFloorHandler({ brokers, client, tableName, output, transactionalId, onRequest }: FloorHandlerOptions): Promise<FloorHandler> {
  const kafka = new Kafka({ brokers: [...brokers], clientId: 'bench-floor', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  if (onRequest) producer.on(producer.events.REQUEST, requestListener(onRequest));
  await producer.connect();
  const key = (partitionId: string, name: string) => ({ pk: partitionId, sk: name });
  const read = async (partitionId: string, names: readonly string[]): Promise<Map<string, unknown>> => {
    const { Responses } = await client.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: names.map((name) => key(partitionId, name)), ConsistentRead: true } } }),
    );
    return new Map((Responses?.[tableName] ?? []).map((item) => [item.sk as string, item.windows as unknown]));
  };
  const handle = async (event: MSKEvent): Promise<void> => {
    for (const [partitionId, records] of Object.entries(event.records)) {
      const sums = new Map<string, Map<number, number>>();
      let maxTimestamp = Number.MIN_SAFE_INTEGER;
      for (const record of records) {
        const order = JSON.parse(Buffer.from(record.value, 'base64').toString('utf8')) as { category: string; amount: number; timestamp: number };
        const start = order.timestamp - (order.timestamp % WINDOW_MS);
        let windows = sums.get(order.category);
        if (!windows) sums.set(order.category, (windows = new Map<number, number>()));
        windows.set(start, (windows.get(start) ?? 0) + order.amount);
        if (order.timestamp > maxTimestamp) maxTimestamp = order.timestamp;
      }

      const stored = await read(partitionId, [...sums.keys(), PROGRESS]);
      const previous = (stored.get(PROGRESS) as Progress | undefined) ?? { offset: 0, watermark: Number.MIN_SAFE_INTEGER, open: {} };
      const watermark = Math.max(previous.watermark, maxTimestamp - BENCH_OUT_OF_ORDERNESS_MS - 1);
      const closing = Object.keys(previous.open).filter((category) => previous.open[category]?.some((start) => start + WINDOW_MS - 1 <= watermark));
      // Rare: a category with a window to close that this batch did not bring.
      const unread = closing.filter((category) => !sums.has(category));
      if (unread.length > 0) for (const [name, windows] of await read(partitionId, unread)) stored.set(name, windows);
      const categories = [...new Set([...sums.keys(), ...closing])];

      const emitted: { key: string; value: string }[] = [];
      const open: Record<string, number[]> = {};
      const changed = new Map<string, Windows>();
      for (const category of categories) {
        const windows: Windows = { ...(stored.get(category) as Windows | undefined) };
        for (const [start, amount] of sums.get(category) ?? []) {
          // Late: its window closed already.
          if (start + WINDOW_MS - 1 <= previous.watermark) continue;
          windows[start] = (windows[start] ?? 0) + amount;
        }
        for (const [start, amount] of Object.entries(windows)) {
          if (Number(start) + WINDOW_MS - 1 > watermark) continue;
          emitted.push({ key: category, value: JSON.stringify({ category, windowStart: Number(start), amount }) });
          delete windows[start];
        }
        changed.set(category, windows);
      }
      for (const [category, starts] of Object.entries(previous.open)) if (!changed.has(category)) open[category] = starts;
      for (const [category, windows] of changed) {
        const starts = Object.keys(windows).map(Number);
        if (starts.length > 0) open[category] = starts;
      }

      if (emitted.length > 0) {
        const transaction = await producer.transaction();
        await transaction.send({ topic: output, messages: emitted });
        await transaction.commit();
      }
      const offset = (records.at(-1)?.offset ?? previous.offset - 1) + 1;
      await Promise.all([
        ...[...changed].map(([category, windows]) => client.send(new PutCommand({ TableName: tableName, Item: { ...key(partitionId, category), windows } }))),
        client.send(new PutCommand({ TableName: tableName, Item: { ...key(partitionId, PROGRESS), windows: { offset, watermark, open } } })),
      ]);
    }
  };
  return { handle, close: () => producer.disconnect() };
}
