// `npm run kafka:start|stop` and `npm run registry:start|stop`: the local services from the command line.
import { startLocalBroker, stopLocalBroker } from './kafka-broker.js';
import { startLocalSchemaRegistry, stopLocalSchemaRegistry } from './schema-registry.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Each service's start, which returns the address clients use, and stop, which says whether one was running. */
const services = {
  kafka: {
    start: async () => (await startLocalBroker({ log })).brokers.join(','),
    stop: () => stopLocalBroker({ log }),
    name: 'Kafka broker',
  },
  registry: {
    start: async () => (await startLocalSchemaRegistry({ log })).url,
    stop: () => stopLocalSchemaRegistry({ log }),
    name: 'schema registry',
  },
};

const [serviceName, command] = process.argv.slice(2);
const service = services[serviceName as keyof typeof services] as (typeof services)[keyof typeof services] | undefined;

try {
  if (service && command === 'start') {
    process.stdout.write(`${await service.start()}\n`);
  } else if (service && command === 'stop') {
    if (!(await service.stop())) log(`No local ${service.name} was running.`);
  } else {
    log('usage: service-cli.ts kafka|registry start|stop');
    process.exitCode = 2;
  }
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
