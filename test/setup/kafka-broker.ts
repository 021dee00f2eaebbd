// Starts the local Kafka broker once per test run (or uses KAFKA_BROKERS) and hands its
// address to the tests; stops it afterwards only if this run started it.
import 'vitest';
import type { TestProject } from 'vitest/node';
import { brokersFromEnvironment } from '../../lib/kafka/index.js';
import { startLocalBroker, stopLocalBroker } from '../../lib/offline/kafka-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const configured = brokersFromEnvironment();
  if (configured) {
    project.provide('kafkaBrokers', configured);
    return () => Promise.resolve();
  }
  const log = (line: string) => process.stderr.write(`[kafka] ${line}\n`);
  const broker = await startLocalBroker({ log });
  project.provide('kafkaBrokers', broker.brokers);
  return async () => {
    if (broker.started) await stopLocalBroker({ log });
  };
}
