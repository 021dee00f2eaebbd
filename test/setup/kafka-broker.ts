// Starts the local Kafka broker once per test run (or uses KAFKA_BROKERS) and hands its
// address to the tests; stops it afterwards only if this run started it.
import 'vitest';
import type { TestProject } from 'vitest/node';
import { acquireBrokers } from '../../lib/offline/kafka-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { brokers, release } = await acquireBrokers({ fresh: true, log: (line) => process.stderr.write(`[kafka] ${line}\n`) });
  project.provide('kafkaBrokers', brokers);
  return release;
}
