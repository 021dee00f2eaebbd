// Kafka helpers for tests and the chaos runner, with no dependency on vitest: unique names,
// and an independent read_committed consumer (kafkajs's own consumer with a consumer group)
// to check what Sluice wrote.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

/** A topic or id name that no other test or earlier run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface ConsumedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  /** The value's bytes, for binary formats. */
  readonly bytes: Buffer | null;
  /** The record's timestamp (CreateTime, or the broker's with LogAppendTime). */
  readonly timestamp: number;
}

export interface ConsumeOptions {
  readonly brokers: readonly string[];
  readonly expected?: number;
  readonly settleMs?: number;
  readonly timeoutMs?: number;
  readonly readUncommitted?: boolean;
}

/**
 * Reads a topic from the beginning with a fresh consumer group, until `expected` messages
 * have arrived and then `settleMs` more have passed without any (so that duplicates would
 * show), or until `timeoutMs`. read_committed unless `readUncommitted`.
 */
export async function consumeTopic(
  topic: string,
  { brokers, expected = 0, settleMs = 1_500, timeoutMs = 30_000, readUncommitted = false }: ConsumeOptions,
): Promise<ConsumedMessage[]> {
  const kafka = new Kafka({ brokers: [...brokers], clientId: 'sluice-test-consumer', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: uniqueName('test-consumer'),
    readUncommitted,
    maxWaitTimeInMs: 200,
  });
  const messages: ConsumedMessage[] = [];
  let lastArrival = Date.now();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const group = { joined: false };
  consumer.on(consumer.events.GROUP_JOIN, () => {
    group.joined = true;
    lastArrival = Date.now();
  });
  // A rebalance (a missed heartbeat on a loaded machine) hands out again what was not yet
  // committed: the same offsets, the same records. A record written twice has two offsets.
  const seen = new Set<string>();
  await consumer.run({
    eachMessage: ({ partition, message }) => {
      const position = `${partition}@${message.offset}`;
      if (seen.has(position)) return Promise.resolve();
      seen.add(position);
      messages.push({
        partition,
        offset: Number(message.offset),
        key: message.key?.toString() ?? null,
        value: message.value?.toString() ?? null,
        bytes: message.value,
        timestamp: Number(message.timestamp),
      });
      lastArrival = Date.now();
      return Promise.resolve();
    },
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (group.joined && messages.length >= expected && Date.now() - lastArrival >= settleMs) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // kafkajs's disconnect can wait forever on a group join still in flight, a known kafkajs behaviour;
  // what was read is read by then, so it gets a bounded wait.
  await Promise.race([consumer.disconnect(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  return messages;
}


/** Moves a partition's log start to `offset` (Kafka's deleteRecords), as retention moves it. */
export async function deleteRecordsBefore(brokers: readonly string[], topic: string, partition: number, offset: string): Promise<void> {
  const admin = new Kafka({ brokers: [...brokers], clientId: 'sluice-test-admin', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    // kafkajs looks the partition's leader up in metadata it does not load itself.
    await admin.fetchTopicMetadata({ topics: [topic] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset }] });
  } finally {
    await admin.disconnect();
  }
}
