// Output that the sink topic's retention would delete at once is refused, not lost: with the
// element's timestamp (as Flink) totals of 3-day-old orders fail their batch on a topic that
// keeps records for a day, with an error that names the topic, the time and the fixes; with
// RecordTimestamp.WRITE_TIME the same totals are written and kept through the broker's
// retention checks, which delete an old record in that topic meanwhile. A sink topic that does
// not exist fails the batch with an error naming it, and is not created.
import { describe, expect, it } from 'vitest';
import { minutes, RecordTimestamp } from '../../../lib/api/index.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter, type KafkaRecord } from '../../../lib/kafka/index.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders, RECENT_START } from '../../helpers/orders.js';
import { orderTotalsPipeline, type Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const DAY = 86_400_000;
const PARTITIONS = 2;

/** Orders of three days ago, on an input topic, and a sink topic that keeps records for one day. */
async function setUp(name: string, { createSink = true } = {}) {
  const { admin, dynamo, s3 } = environment();
  await ensureStateTable(createDocumentClient(dynamo), name);
  await ensureBucket(createS3Client(s3), name);
  await admin.ensureTopics([
    { topic: `${name}-orders`, partitions: PARTITIONS },
    ...(createSink ? [{ topic: `${name}-out`, partitions: PARTITIONS, configs: { 'retention.ms': String(DAY) } }] : []),
  ]);
  const orders = generateOrders({ count: 600, start: RECENT_START - 2 * DAY, lateFraction: 0 });
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
  await writer.write(
    [...orders, ...closingOrders(orders, PARTITIONS)].map(({ late: _late, ...o }) => ({ topic: `${name}-orders`, key: o.category, value: JSON.stringify(o) })),
  );
  await writer.close();
  return orders;
}

function start(name: string, recordTimestamp: RecordTimestamp) {
  const pipeline = orderTotalsPipeline({ name, input: `${name}-orders`, brokers: testBrokers(), window: minutes(1), recordTimestamp });
  const clock = { now: 1_000_000 };
  const runtime = new PipelineRuntime(
    pipeline,
    { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
    { clock: () => clock.now },
  );
  return { runtime, driver: new LambdaDriver(runtime, clock) };
}

async function committedRecords(topic: string): Promise<KafkaRecord[]> {
  const reader = new CommittedRangeReader({ brokers: testBrokers() });
  const records: KafkaRecord[] = [];
  for (const { partition, low, stable } of (await environment().admin.describeTopics([topic])).flatMap((d) => d.partitions)) {
    records.push(...(await reader.read({ topic, partition, from: Number(low), to: Number(stable) })));
  }
  await reader.close();
  return records;
}

describe('output timestamps against the sink topic’s retention', () => {
  it('fail the batch with the topic, the time and the fixes when retention would delete the output', async () => {
    const name = uniqueName('retention-element');
    await setUp(name);
    const { runtime, driver } = start(name, RecordTimestamp.ELEMENT);
    try {
      const failure = await driver.drain().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      const message = (failure as Error).message;
      expect(message).toContain(`An output record for ${name}-out`);
      expect(message).toContain(`retention.ms of 1 day (${DAY} ms)`);
      expect(message).toMatch(/has the timestamp \d{4}-\d\d-\d\dT/);
      expect(message).toContain('setRecordTimestamp(RecordTimestamp.WRITE_TIME)');
      expect(message).toMatch(new RegExp(`came from stage-1's batch of ${name}-orders/\\d from offset \\d+`));
      expect(await committedRecords(`${name}-out`)).toEqual([]);
    } finally {
      await driver.close();
      await runtime.close();
    }
  });

  it('write and keep the output with RecordTimestamp.WRITE_TIME', async () => {
    const name = uniqueName('retention-write-time');
    const orders = await setUp(name);
    // First, proof that retention acts on this topic within the test: a record stamped two days ago goes.
    const control = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await control.write([{ topic: `${name}-out`, partition: 0, value: 'two days old', timestamp: Date.now() - 2 * DAY }]);
    await control.close();
    await expect
      .poll(async () => (await environment().admin.describeTopics([`${name}-out`]))[0]?.partitions[0]?.low, { timeout: 60_000, interval: 500 })
      .toBe('1');

    const { runtime, driver } = start(name, RecordTimestamp.WRITE_TIME);
    const writtenFrom = Date.now();
    try {
      await driver.drain();
      await driver.checkpoint();
    } finally {
      await driver.close();
      await runtime.close();
    }
    const expected = expectedTotals(orders, minutes(1));
    const totalsOf = (records: readonly KafkaRecord[]) =>
      new Map(records.map((r) => JSON.parse(r.value?.toString('utf8') ?? '{}') as Total).map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
    const written = await committedRecords(`${name}-out`);
    expect(totalsOf(written)).toEqual(expected);
    for (const record of written) expect(record.timestamp, 'the time of writing').toBeGreaterThanOrEqual(writtenFrom - 1_000);

    // Three of the broker's retention checks later (every 5 s here, infra/kafka/server.properties), all of it is still there.
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    expect(totalsOf(await committedRecords(`${name}-out`))).toEqual(expected);
  });
});

describe('a sink topic that does not exist', () => {
  it('fails the batch with an error that names it, and is not created', async () => {
    const name = uniqueName('missing-sink');
    await setUp(name, { createSink: false });
    const { runtime, driver } = start(name, RecordTimestamp.WRITE_TIME);
    try {
      const failure = await driver.drain().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failure as Error).message).toBe(
        `Topic ${name}-out does not exist on the brokers. Create it (kafka-topics.sh --create --topic <name> --partitions <n>), or fix the name in the pipeline.`,
      );
      expect(await environment().admin.listTopics()).not.toContain(`${name}-out`);
    } finally {
      await driver.close();
      await runtime.close();
    }
  });
});
