// Kafka helpers for tests and the chaos runner, with no dependency on vitest: unique names,
// and an independent read_committed consumer (Apache Kafka's Java consumer) to check what
// Sluice wrote.
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { buildOnce } from '../../lib/offline/cache-folder.js';
import { javaCommand, runTool } from '../../lib/offline/java-service.js';
import { ensureKafkaRuntime } from '../../lib/offline/kafka-broker.js';

/** A topic or id name that no other test or earlier run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface ConsumedMessage {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  /** The value's bytes, for binary formats. */
  readonly bytes: Buffer | null;
  /** The record's timestamp (CreateTime, or the broker's with LogAppendTime). */
  readonly timestamp: number;
}

export interface ConsumeOptions {
  readonly brokers: readonly string[];
  readonly expected?: number;
  readonly settleMs?: number;
  readonly timeoutMs?: number;
  readonly readUncommitted?: boolean;
}

const READER_SOURCE = fileURLToPath(new URL('./TopicReader.java', import.meta.url));
const READER_LOG_CONFIG = fileURLToPath(new URL('./topic-reader-log4j2.properties', import.meta.url));

/**
 * The folder of the compiled TopicReader, next to the broker's jars: compiled once for each
 * version of its source, and in a folder of its own first, so that test workers compiling at
 * once do not see each other's half-written class.
 */
function compiledTopicReader(libs: string): string {
  const version = createHash('sha256').update(readFileSync(READER_SOURCE)).digest('hex').slice(0, 12);
  const folder = join(dirname(libs), `topic-reader-${version}`);
  return buildOnce(folder, (staging) =>
    runTool(javaCommand('javac'), ['-cp', join(libs, '*'), '-d', staging, READER_SOURCE], "compile the tests' topic reader"),
  );
}

function decoded(field: string | undefined): Buffer | null {
  return field === undefined || field === '-' ? null : Buffer.from(field, 'base64');
}

/**
 * Reads a topic from the beginning with Apache Kafka's own Java consumer (TopicReader.java),
 * until `expected` messages have arrived and then `settleMs` more have passed without any (so
 * that duplicates would show), or until `timeoutMs`. read_committed unless `readUncommitted`.
 *
 * Not kafkajs's consumer: under read_committed it shows the records of an aborted transaction
 * that began before another aborted transaction and ended after it, because it takes the
 * broker's list of aborted transactions, which is in the order they ended, for the order they
 * began (test/integration/kafka/topic-reader.test.ts).
 */
export async function consumeTopic(
  topic: string,
  { brokers, expected = 0, settleMs = 1_500, timeoutMs = 30_000, readUncommitted = false }: ConsumeOptions,
): Promise<ConsumedMessage[]> {
  const libs = ensureKafkaRuntime();
  const args = [
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Xmx256m',
    `-Dlog4j2.configurationFile=${READER_LOG_CONFIG}`,
    '-cp',
    [compiledTopicReader(libs), join(libs, '*')].join(delimiter),
    'TopicReader',
    brokers.join(','),
    topic,
    String(expected),
    String(settleMs),
    String(timeoutMs),
    readUncommitted ? 'read_uncommitted' : 'read_committed',
  ];
  const printed = await new Promise<string>((resolve, reject) => {
    execFile(javaCommand(), args, { maxBuffer: 1 << 30, timeout: timeoutMs + 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`The topic reader failed to read ${topic}: ${error.message}\n${stderr.split('\n').slice(-20).join('\n')}`));
      else resolve(stdout);
    });
  });
  return printed
    .split('\n')
    .filter((line) => line.startsWith('record '))
    .map((line): ConsumedMessage => {
      const [, partition, offset, timestamp, key, value] = line.split(' ');
      const bytes = decoded(value);
      return {
        partition: Number(partition),
        offset: Number(offset),
        timestamp: Number(timestamp),
        key: decoded(key)?.toString() ?? null,
        value: bytes?.toString() ?? null,
        bytes,
      };
    });
}

/** Moves a partition's log start to `offset` (Kafka's deleteRecords), as retention moves it. */
export async function deleteRecordsBefore(brokers: readonly string[], topic: string, partition: number, offset: string): Promise<void> {
  const admin = new Kafka({ brokers: [...brokers], clientId: 'sluice-test-admin', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    // kafkajs looks the partition's leader up in metadata it does not load itself.
    await admin.fetchTopicMetadata({ topics: [topic] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset }] });
  } finally {
    await admin.disconnect();
  }
}
