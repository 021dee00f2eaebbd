// Throughput of lib/kafka's writers and ranged reader on the local broker (or KAFKA_BROKERS),
// with 1 KB JSON records. Not a test: run it with `npm run bench:kafka [-- --records N]`.
// Prints a Markdown table and writes it to bench/results/kafka-io.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import {
  CommittedRangeReader,
  createRecordWriter,
  KafkaAdmin,
  KafkaCommitter,
  TransactionalWriter,
  type OutputRecord,
} from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    partitions: { type: 'string', default: '4' },
    batch: { type: 'string', default: '1000' },
  },
});
const totalRecords = Number(args.records);
const partitions = Number(args.partitions);
const writeBatch = Number(args.batch);

const { brokers, release } = await acquireBrokers({ fresh: true });
const admin = new KafkaAdmin({ brokers });
const runId = Date.now().toString(36);
const topics: string[] = [];

const PADDING = 'x'.repeat(1024);

/** A JSON order of exactly 1,024 bytes. */
function order(i: number): string {
  const json = JSON.stringify({
    orderId: `o-${i}`,
    category: `c-${i % 50}`,
    amount: (i % 1000) / 10,
    timestamp: 1_764_400_000_000 + i,
    note: '',
  });
  return json.replace('"note":""', `"note":"${PADDING.slice(0, 1024 - json.length)}"`);
}

async function freshTopic(name: string): Promise<string> {
  const topic = `bench-${name}-${runId}`;
  // The records' timestamps are fixed, and old: a topic with time retention would delete them.
  await admin.ensureTopics([{ topic, partitions, configs: { 'retention.ms': '-1' } }]);
  topics.push(topic);
  return topic;
}

function batches(topic: string): OutputRecord[][] {
  const result: OutputRecord[][] = [];
  for (let start = 0; start < totalRecords; start += writeBatch) {
    const end = Math.min(start + writeBatch, totalRecords);
    const batch: OutputRecord[] = [];
    for (let i = start; i < end; i++) batch.push({ topic, key: `c-${i % 50}`, value: order(i) });
    result.push(batch);
  }
  return result;
}

interface Row {
  readonly name: string;
  readonly seconds: number;
  readonly detail: string;
}

async function timed(name: string, detail: string, run: () => Promise<void>): Promise<Row> {
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stderr.write(`${name}: ${Math.round(totalRecords / seconds)} records/s\n`);
  return { name, seconds, detail };
}

async function nonTransactional(guarantee: 'NONE' | 'AT_LEAST_ONCE'): Promise<{ row: Row; topic: string }> {
  const topic = await freshTopic(guarantee.toLowerCase().replace(/_/g, '-'));
  const input = batches(topic);
  const writer = createRecordWriter(guarantee, { brokers });
  const row = await timed(guarantee, guarantee === 'NONE' ? 'acks=0' : 'idempotent, acks=all, flushed', async () => {
    for (const batch of input) await writer.write(batch);
    await writer.flush();
  });
  await writer.close();
  return { row, topic };
}

async function exactlyOnce(recordsPerCommit: number): Promise<Row> {
  const topic = await freshTopic(`eo-${recordsPerCommit}`);
  const input = batches(topic);
  const committer = new KafkaCommitter({ brokers });
  const transactionalId = `bench-eo-${recordsPerCommit}-${runId}`;
  const transactions = Math.ceil(totalRecords / recordsPerCommit);
  const row = await timed(
    `EXACTLY_ONCE, commit every ${recordsPerCommit.toLocaleString('en')}`,
    `${transactions} transactions: begin, write, pre-commit, commit by handle`,
    async () => {
      const perTransaction = recordsPerCommit / writeBatch;
      for (let t = 0; t < transactions; t++) {
        const { writer } = await TransactionalWriter.begin({ brokers, transactionalId, transactionTimeoutMs: 60_000 });
        for (const batch of input.slice(t * perTransaction, (t + 1) * perTransaction)) await writer.write(batch);
        const handle = await writer.preCommit();
        await writer.close();
        await committer.commit(handle);
      }
    },
  );
  await committer.close();
  return row;
}

async function rangedRead(topic: string): Promise<Row> {
  const reader = new CommittedRangeReader({ brokers });
  const [description] = await admin.describeTopics([topic]);
  let read = 0;
  const row = await timed('ranged read_committed read', `${partitions} partitions, whole log of each`, async () => {
    for (const { partition, stable } of description?.partitions ?? []) {
      read += (await reader.read({ topic, partition, from: 0, to: Number(stable) })).length;
    }
  });
  await reader.close();
  if (read !== totalRecords) throw new Error(`The ranged read returned ${read} records, not ${totalRecords}`);
  return row;
}

/** Polls each partition `maxRecords` at a time, as the emulated event source mapping does. */
async function polled(topic: string, maxRecords: number): Promise<Row> {
  const reader = new CommittedRangeReader({ brokers });
  let read = 0;
  const row = await timed(`read_committed polls of ${maxRecords.toLocaleString('en')}`, `${partitions} partitions, readAvailable to the end`, async () => {
    for (let partition = 0; partition < partitions; partition++) {
      for (let next = 0; ; ) {
        const poll = await reader.readAvailable(topic, partition, next, maxRecords);
        if (poll.records.length === 0) break;
        read += poll.records.length;
        next = poll.next;
      }
    }
  });
  await reader.close();
  if (read !== totalRecords) throw new Error(`The polls returned ${read} records, not ${totalRecords}`);
  return row;
}

const rows: Row[] = [];
rows.push((await nonTransactional('NONE')).row);
const atLeastOnce = await nonTransactional('AT_LEAST_ONCE');
rows.push(atLeastOnce.row);
if (totalRecords % writeBatch === 0 && totalRecords >= 1000) rows.push(await exactlyOnce(1000));
if (totalRecords % 10_000 === 0 && totalRecords >= 10_000) rows.push(await exactlyOnce(10_000));
rows.push(await rangedRead(atLeastOnce.topic));
rows.push(await polled(atLeastOnce.topic, 100));
rows.push(await polled(atLeastOnce.topic, 1_000));

await admin.deleteTopics(topics);
await admin.close();
await release();

const report = [
  `# lib/kafka throughput`,
  '',
  `${totalRecords.toLocaleString('en')} records of 1 KB JSON per row, ${partitions} partitions, writes of ` +
    `${writeBatch.toLocaleString('en')} records, one local broker; ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ` +
    `Node.js ${process.version}, ${new Date().toISOString()}.`,
  '',
  '| path | records/s | MB/s | seconds | how |',
  '| --- | ---: | ---: | ---: | --- |',
  ...rows.map(
    ({ name, seconds, detail }) =>
      `| ${name} | ${Math.round(totalRecords / seconds).toLocaleString('en')} | ` +
      `${((totalRecords * 1024) / seconds / 1e6).toFixed(1)} | ${seconds.toFixed(2)} | ${detail} |`,
  ),
  '',
].join('\n');
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/kafka-io.md', import.meta.url), report);
process.stdout.write(report);
