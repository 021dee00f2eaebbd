// The KafkaClients contract against the real broker and against the simulation's twin.
import { afterAll, beforeAll } from 'vitest';
import { connectKafka, KafkaAdmin, type KafkaClients } from '../../../lib/kafka/index.js';
import { KafkaTwin } from '../../../lib/testing/kafka-twin.js';
import { testBrokers, uniqueName, writeOutsideTransactions } from '../../helpers/kafka.js';
import { kafkaClientsContract } from './kafka-clients-contract.js';

let real: KafkaClients;
let admin: KafkaAdmin;
beforeAll(() => {
  real = connectKafka({ brokers: testBrokers() });
  admin = new KafkaAdmin({ brokers: testBrokers() });
});
afterAll(async () => {
  await real.close();
  await admin.close();
});

kafkaClientsContract('real broker', () => ({
  clients: real,
  createTopic: async (partitions = 1, configs = {}) => {
    const topic = uniqueName('contract');
    await admin.ensureTopics([{ topic, partitions, configs }]);
    return topic;
  },
  append: writeOutsideTransactions,
  pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  transactionalId: () => uniqueName('contract-tx'),
}));

let now = Date.UTC(2026, 11, 1);
const twin = new KafkaTwin({ clock: () => now });
let topics = 0;
kafkaClientsContract('twin', () => ({
  clients: twin,
  createTopic: (partitions = 1, configs = {}) => {
    const topic = `contract-${++topics}`;
    twin.createTopic(topic, partitions, configs);
    return Promise.resolve(topic);
  },
  append: (records) => {
    twin.append(records);
    return Promise.resolve();
  },
  pass: (ms) => {
    now += ms;
    return Promise.resolve();
  },
  transactionalId: () => `contract-tx-${++topics}`,
}));
