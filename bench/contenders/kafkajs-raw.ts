// Contender 1: kafkajs consume → produce, no state, no guarantees: the JavaScript client's
// ceiling on this machine.
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { readConfig, ready, report } from './config.js';
import { consumeUntil } from './kafkajs-common.js';

const config = readConfig();
const kafka = new Kafka({ brokers: config.brokers, clientId: 'bench-raw', logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId: `${config.output}-raw` });
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
await Promise.all([consumer.connect(), producer.connect()]);
await consumer.subscribe({ topic: config.input, fromBeginning: true });
ready();
const started = Date.now();
await consumeUntil(consumer, config.records, async (batch) => {
  await producer.send({ topic: config.output, acks: 1, messages: batch.messages.map((m) => ({ key: m.key, value: m.value })) });
});
const elapsedMs = Date.now() - started;
await consumer.disconnect();
await producer.disconnect();
report({ elapsedMs, outputs: config.records });
