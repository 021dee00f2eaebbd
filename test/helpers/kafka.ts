// Test helpers: unique names, and an independent read_committed consumer (kafkajs's own
// consumer with a consumer group) to check what Sluice's Kafka layer wrote.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { inject } from 'vitest';

export function testBrokers(): string[] {
  return inject('kafkaBrokers');
}

/** A topic or id name that no other test or earlier run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface ConsumedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
}

/**
 * Reads a topic from the beginning with a fresh consumer group, until `expected` messages
 * have arrived and then `settleMs` more have passed without any (so that duplicates would
 * show), or until `timeoutMs`. read_committed unless `readUncommitted`.
 */
export async function consumeAll(
  topic: string,
  { expected = 0, settleMs = 1_500, timeoutMs = 30_000, readUncommitted = false } = {},
): Promise<ConsumedMessage[]> {
  const kafka = new Kafka({ brokers: testBrokers(), clientId: 'sluice-test-consumer', logLevel: logLevel.NOTHING });
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
  await consumer.run({
    eachMessage: ({ partition, message }) => {
      messages.push({
        partition,
        offset: Number(message.offset),
        key: message.key?.toString() ?? null,
        value: message.value?.toString() ?? null,
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
  await consumer.disconnect();
  return messages;
}

const CHILD = fileURLToPath(new URL('./transaction-child.ts', import.meta.url));

/**
 * Runs one step of a transaction in a separate Node.js process (see transaction-child.ts)
 * and returns what it printed as JSON.
 */
export async function runChild<T>(step: Record<string, unknown>): Promise<T> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', CHILD, JSON.stringify({ brokers: testBrokers(), ...step })],
    { timeout: 60_000 },
  );
  return JSON.parse(stdout) as T;
}
