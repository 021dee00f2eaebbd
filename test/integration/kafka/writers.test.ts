import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectKafka, createRecordWriter, KafkaAdmin, type KafkaRequestSpan } from '../../../lib/kafka/index.js';
import { startLocalBroker } from '../../../lib/offline/kafka-broker.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';

let admin: KafkaAdmin;

beforeAll(() => {
  admin = new KafkaAdmin({ brokers: testBrokers() });
});

afterAll(async () => {
  await admin.close();
});

describe('non-transactional writers', () => {
  it.each(['NONE', 'AT_LEAST_ONCE'] as const)('%s writes every record, keyed records to their key’s partition', async (guarantee) => {
    const topic = uniqueName(`writer-${guarantee.toLowerCase()}`);
    await admin.ensureTopics([{ topic, partitions: 3 }]);
    const writer = createRecordWriter(guarantee, { brokers: testBrokers() });
    const values = Array.from({ length: 600 }, (_, i) => `value-${i}`);
    for (let i = 0; i < values.length; i += 200) {
      await writer.write(values.slice(i, i + 200).map((value, j) => ({ topic, key: `key-${(i + j) % 7}`, value })));
    }
    await writer.flush();
    await writer.close();

    const consumed = await consumeAll(topic, { expected: values.length });
    expect(consumed.map((m) => m.value).sort()).toEqual([...values].sort());
    const partitionsOfKey = new Map<string | null, Set<number>>();
    for (const { key, partition } of consumed) partitionsOfKey.set(key, (partitionsOfKey.get(key) ?? new Set()).add(partition));
    for (const partitions of partitionsOfKey.values()) expect(partitions.size).toBe(1);
  });

  it('AT_LEAST_ONCE flush fails loudly when the topic does not exist', async () => {
    const writer = createRecordWriter('AT_LEAST_ONCE', {
      brokers: testBrokers(),
      retry: { retries: 1, initialRetryTime: 50 },
    });
    await writer.write([{ topic: uniqueName('missing'), value: 'x' }]);
    await expect(writer.flush()).rejects.toThrow(/topic|partition/i);
    await writer.close();
  });
});

describe('KafkaAdmin', () => {
  it('creates missing topics once, describes them, and refuses a different partition count', async () => {
    const topic = uniqueName('admin');
    expect(await admin.ensureTopics([{ topic, partitions: 4 }])).toEqual({ created: [topic] });
    expect(await admin.ensureTopics([{ topic, partitions: 4 }])).toEqual({ created: [] });
    const [description] = await admin.describeTopics([topic]);
    expect(description?.partitions.map((p) => [p.partition, p.low, p.stable])).toEqual([
      [0, '0', '0'],
      [1, '0', '0'],
      [2, '0', '0'],
      [3, '0', '0'],
    ]);
    await expect(admin.ensureTopics([{ topic, partitions: 2 }])).rejects.toThrow(
      `Topic "${topic}" exists with 4 partitions, but 2 are expected`,
    );
    await expect(admin.ensureTopics([{ topic: uniqueName('admin'), partitions: 0 }])).rejects.toThrow(/whole number ≥ 1/);
  });

  it('describes the cluster', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.length).toBeGreaterThan(0);
    expect(cluster.clusterId).not.toBe('');
  });
});

describe.skipIf(process.env.KAFKA_BROKERS)('the local broker launcher', () => {
  it('reuses the running broker on a second start', async () => {
    const again = await startLocalBroker();
    expect(again.started).toBe(false);
    expect(again.brokers).toEqual(testBrokers());
  });
});

describe('onRequest', () => {
  it('reports each request to a broker, by its protocol name, from the admin, the producers and the transactional connection', async () => {
    const topic = uniqueName('requests');
    const spans: KafkaRequestSpan[] = [];
    const options = { brokers: testBrokers(), onRequest: (span: KafkaRequestSpan) => spans.push(span) };
    const observedAdmin = new KafkaAdmin(options);
    await observedAdmin.ensureTopics([{ topic, partitions: 1 }]);
    await observedAdmin.close();
    expect(spans.map((span) => span.api)).toContain('CreateTopics');

    const writer = createRecordWriter('AT_LEAST_ONCE', options);
    await writer.write([{ topic, partition: 0, value: 'plain' }]);
    await writer.flush();
    await writer.close();
    expect(spans.filter((span) => span.api === 'Produce')).toHaveLength(1);

    const clients = connectKafka(options);
    const transaction = await clients.beginTransaction({ transactionalId: `${topic}-tx`, transactionTimeoutMs: 60_000 });
    await transaction.write([{ topic, partition: 0, value: 'in a transaction' }]);
    const handle = await transaction.preCommit();
    await transaction.close();
    expect(await clients.committer.commit(handle)).toBe('committed');
    await clients.close();
    const apis = spans.map((span) => span.api);
    for (const api of ['InitProducerId', 'AddPartitionsToTxn', 'EndTxn']) expect(apis).toContain(api);
    expect(apis.filter((api) => api === 'Produce')).toHaveLength(2);
    for (const span of spans) expect(span.end).toBeGreaterThanOrEqual(span.start);
  });
});
