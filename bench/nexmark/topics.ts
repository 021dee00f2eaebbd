// Nexmark's events on Kafka: one topic per kind, events dealt round-robin over the partitions in
// id order, so that each partition is in event-time order; and the committed records a query wrote.
import { CommittedRangeReader, createRecordWriter, KafkaAdmin, type KafkaRecord, type OutputRecord } from '../../lib/kafka/index.js';
import { benchTopic } from '../orders.js';
import { EVENT_KINDS, eventAt, eventJson, eventTime, type EventKind, type NexmarkEvent, type NexmarkOptions } from './generator.js';
import { eventTopic, WATERMARK_DELAY_SECONDS } from './queries.js';

/** Writes of this many events stay under the broker's 1 MB request limit (auctions are 500 bytes). */
const WRITE_BATCH = 1_500;

export interface LoadedEvents {
  readonly counts: Readonly<Record<EventKind, number>>;
  /** The watermark once the closing events are read: a window ending after it fires only at the end of input. */
  readonly finalWatermarkMs: number;
}

/**
 * A person, an auction and a bid an hour after the last event, on every partition of their
 * topics: they move each partition's watermark past the windows the events leave open, so that
 * an engine that never sees the end of its input (Sluice's handler) fires them as one that does
 * (Flink's bounded read). They join nothing: the auction's id and seller and the person's id are
 * no event's, and the auction is in no category a query filters on.
 */
export function closingEvents(events: number, options: NexmarkOptions): NexmarkEvent[] {
  const dateTime = eventTime(eventAt(Math.max(0, events - 1), options)) + 3_600_000;
  return [
    { kind: 'person', person: { id: -1, name: 'closing', emailAddress: '', creditCard: '', city: '', state: '', dateTime, extra: '' } },
    { kind: 'auction', auction: { id: -1, itemName: 'closing', description: '', initialBid: 0, reserve: 0, dateTime, expires: dateTime, seller: -2, category: -1, extra: '' } },
    { kind: 'bid', bid: { auction: 0, bidder: 0, price: 0, channel: 'closing', url: '', dateTime, extra: '' } },
  ];
}

/** The events 0 … events - 1, then the closing events, in the order a partition holds them. */
export function* nexmarkRecords(
  events: number,
  partitions: number,
  options: NexmarkOptions,
): Generator<{ event: NexmarkEvent; kind: EventKind; partition: number; value: string; timestamp: number }> {
  const next = { person: 0, auction: 0, bid: 0 };
  for (let id = 0; id < events; id++) {
    const event = eventAt(id, options);
    yield { event, kind: event.kind, partition: next[event.kind]++ % partitions, value: eventJson(event), timestamp: eventTime(event) };
  }
  for (const closing of closingEvents(events, options)) {
    for (let partition = 0; partition < partitions; partition++) yield { event: closing, kind: closing.kind, partition, value: eventJson(closing), timestamp: eventTime(closing) };
  }
}

export async function loadNexmark(brokers: readonly string[], prefix: string, events: number, partitions: number, options: NexmarkOptions): Promise<LoadedEvents> {
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  try {
    await admin.ensureTopics(EVENT_KINDS.map((kind) => benchTopic(eventTopic(prefix, kind), partitions)));
  } finally {
    await admin.close();
  }
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: [...brokers] });
  const counts = { person: 0, auction: 0, bid: 0 };
  let batch: OutputRecord[] = [];
  for (const { kind, partition, value, timestamp } of nexmarkRecords(events, partitions, options)) {
    counts[kind]++;
    batch.push({ topic: eventTopic(prefix, kind), partition, value, timestamp });
    if (batch.length === WRITE_BATCH) {
      await writer.write(batch);
      batch = [];
    }
  }
  await writer.write(batch);
  await writer.flush();
  await writer.close();
  const [closing] = closingEvents(events, options);
  return { counts, finalWatermarkMs: (closing ? eventTime(closing) : 0) - WATERMARK_DELAY_SECONDS * 1_000 };
}

/** Every committed record of the topic, partition by partition. */
export async function committedOutput(brokers: readonly string[], topic: string): Promise<KafkaRecord[]> {
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const reader = new CommittedRangeReader({ brokers: [...brokers] });
  try {
    const [description] = await admin.describeTopics([topic]);
    const records: KafkaRecord[] = [];
    for (const { partition, stable } of description?.partitions ?? []) {
      for (const record of await reader.read({ topic, partition, from: 0, to: Number(stable) })) records.push(record);
    }
    return records;
  } finally {
    await reader.close();
    await admin.close();
  }
}
