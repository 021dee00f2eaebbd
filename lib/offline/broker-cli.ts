// `npm run kafka:start` / `npm run kafka:stop`: the local broker from the command line.
import { startLocalBroker, stopLocalBroker } from './kafka-broker.js';

const log = (line: string) => process.stderr.write(`${line}\n`);
const command = process.argv[2];

try {
  if (command === 'start') {
    const broker = await startLocalBroker({ log });
    process.stdout.write(`${broker.brokers.join(',')}\n`);
  } else if (command === 'stop') {
    if (!(await stopLocalBroker({ log }))) log('No local Kafka broker was running.');
  } else {
    log('usage: broker-cli.ts start|stop');
    process.exitCode = 2;
  }
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
