// Test helpers on the test run's broker (see kafka-io.ts for the parts that need no vitest).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { createRecordWriter, type CommittedReader, type OutputRecord } from '../../lib/kafka/index.js';
import { consumeTopic, type ConsumedMessage, type ConsumeOptions } from './kafka-io.js';

export { uniqueName, type ConsumedMessage } from './kafka-io.js';

export function testBrokers(): string[] {
  return inject('kafkaBrokers');
}

/** {@link consumeTopic} on the test run's brokers. */
export function consumeAll(topic: string, options: Omit<ConsumeOptions, 'brokers'> = {}): Promise<ConsumedMessage[]> {
  return consumeTopic(topic, { ...options, brokers: testBrokers() });
}

/**
 * Partition 0's log end once it reaches `end`, or after 40 `pause`s if it never does: a test that
 * counts offsets waits so for an abort's marker, which the broker writes after EndTxn answers.
 */
export async function logEndAfter(reader: Pick<CommittedReader, 'logEnd'>, topic: string, end: number, pause: () => Promise<void>): Promise<number> {
  let logEnd = await reader.logEnd(topic, 0);
  for (let attempt = 0; attempt < 40 && logEnd < end; attempt++) {
    await pause();
    logEnd = await reader.logEnd(topic, 0);
  }
  return logEnd;
}

/** Writes `records` to the test run's broker outside any transaction, with Sluice's AT_LEAST_ONCE writer. */
export async function writeOutsideTransactions(records: OutputRecord[]): Promise<void> {
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await writer.write(records);
  await writer.flush();
  await writer.close();
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
