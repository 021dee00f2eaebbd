// The tests' reader of Sluice's output (consumeTopic: Apache Kafka's Java consumer) against the
// real broker, where aborted transactions nest: one begins, a second begins and aborts, then the
// first aborts. The broker lists aborted transactions in the order they ended.
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommittedRangeReader, KafkaAdmin } from '../../../lib/kafka/index.js';
import { consumeAll, logEndAfter, testBrokers, uniqueName, writeOutsideTransactions } from '../../helpers/kafka.js';

let kafka: Kafka;
let reader: CommittedRangeReader;
let admin: KafkaAdmin;
const producers: Producer[] = [];

beforeAll(() => {
  kafka = new Kafka({ brokers: testBrokers(), clientId: 'topic-reader-test', logLevel: logLevel.NOTHING });
  reader = new CommittedRangeReader({ brokers: testBrokers(), waitTimeoutMs: 1_500 });
  admin = new KafkaAdmin({ brokers: testBrokers() });
});

afterAll(async () => {
  await Promise.all(producers.map((producer) => producer.disconnect()));
  await reader.close();
  await admin.close();
});

async function createdTopic(prefix: string, partitions: number): Promise<string> {
  const topic = uniqueName(prefix);
  await admin.ensureTopics([{ topic, partitions }]);
  return topic;
}

async function transactionalProducer(): Promise<Producer> {
  const producer = kafka.producer({ transactionalId: uniqueName('topic-reader'), maxInFlightRequests: 1, idempotent: true });
  producers.push(producer);
  await producer.connect();
  return producer;
}

/** Waits for the log to reach `end`: an abort's marker is written after EndTxn answers. */
async function logReaches(topic: string, end: number): Promise<void> {
  expect(await logEndAfter(reader, topic, end, () => new Promise((resolve) => setTimeout(resolve, 250)))).toBe(end);
}

/** outer-1 at 0, inner at 1, inner's abort marker at 2, outer-2 at 3, outer's marker at 4, plain at 5. */
async function nestedAbortedTransactions(): Promise<string> {
  const topic = await createdTopic('nested-aborts', 1);
  const outer = await (await transactionalProducer()).transaction();
  await outer.send({ topic, messages: [{ value: 'outer-1' }] });
  const inner = await (await transactionalProducer()).transaction();
  await inner.send({ topic, messages: [{ value: 'inner' }] });
  await inner.abort();
  await logReaches(topic, 3);
  await outer.send({ topic, messages: [{ value: 'outer-2' }] });
  await outer.abort();
  await logReaches(topic, 5);
  await writeOutsideTransactions([{ topic, value: 'plain' }]);
  return topic;
}

describe('the tests’ topic reader', () => {
  it('drops every record of nested aborted transactions under read_committed, as Sluice’s range reader does, where kafkajs’s consumer shows one', async () => {
    const topic = await nestedAbortedTransactions();

    const committed = await consumeAll(topic, { expected: 1 });
    expect(committed.map((m) => [m.offset, m.value])).toEqual([[5, 'plain']]);
    const everything = await consumeAll(topic, { expected: 4, readUncommitted: true });
    expect(everything.map((m) => [m.offset, m.value])).toEqual([
      [0, 'outer-1'],
      [1, 'inner'],
      [3, 'outer-2'],
      [5, 'plain'],
    ]);
    const ranged = await reader.read({ topic, partition: 0, from: 0, to: 6 });
    expect(ranged.map((r) => [r.offset, r.value?.toString()])).toEqual([[5, 'plain']]);

    // Why the reader is not kafkajs's consumer: it takes the broker's aborted transactions, listed
    // as they ended (inner, then outer), for the order they began, and so passes outer-1.
    const consumer = kafka.consumer({ groupId: uniqueName('kafkajs-read-committed'), maxWaitTimeInMs: 200 });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: ({ message }) => Promise.resolve(void seen.push(`${message.offset}:${message.value?.toString()}`)) });
    for (let waited = 0; waited < 20_000 && !seen.includes('5:plain'); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await consumer.disconnect();
    expect(seen).toEqual(['0:outer-1', '5:plain']);
  });

  it('reads every partition from the beginning, keys, values, nulls and timestamps as written', async () => {
    const topic = await createdTopic('topic-reader', 3);
    const timestamp = Date.now() - 60_000;
    await writeOutsideTransactions([
      { topic, partition: 0, key: 'k0', value: 'v0', timestamp },
      { topic, partition: 1, key: null, value: Buffer.from([0, 255, 32]), timestamp },
      { topic, partition: 2, key: 'k2', value: null, timestamp },
    ]);

    const read = await consumeAll(topic, { expected: 3, settleMs: 500 });
    expect([...read].sort((a, b) => a.partition - b.partition)).toEqual([
      { partition: 0, offset: 0, timestamp, key: 'k0', value: 'v0', bytes: Buffer.from('v0') },
      { partition: 1, offset: 0, timestamp, key: null, value: Buffer.from([0, 255, 32]).toString(), bytes: Buffer.from([0, 255, 32]) },
      { partition: 2, offset: 0, timestamp, key: 'k2', value: null, bytes: null },
    ]);
  });
});
