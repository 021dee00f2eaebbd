// Records a stage writes into a repartition topic keep their event time in the value and the
// broker's write time as their timestamp: time retention counts from when they were written,
// so a replay of old events is never deleted before the next stage reads it.
import { describe, expect, it } from 'vitest';
import { minutes, TumblingEventTimeWindows } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { CommittedRangeReader, createRecordWriter } from '../../../lib/kafka/index.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();

describe('repartition records', () => {
  it('carry the event time in the value and the write time as the record timestamp', async () => {
    const name = uniqueName('repartition-time');
    const input = `${name}-orders`;
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    await environment().admin.ensureTopics([
      { topic: input, partitions: 2 },
      // The second stage's totals carry their windows' year-old times: only a topic that keeps them takes them.
      { topic: `${name}-out`, partitions: 2, configs: { 'retention.ms': '-1' } },
    ]);
    // Orders from a year before: older than any topic's default 7-day retention.
    const orders = generateOrders({ count: 600, start: Date.UTC(2025, 10, 1), lateFraction: 0 });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(orders.map(({ late: _late, ...o }) => ({ topic: input, key: o.category, value: JSON.stringify(o) })));
    await writer.close();

    const pipeline = orderTotalsPipeline({
      name,
      input,
      brokers: testBrokers(),
      window: minutes(1),
      rest: (totals) => totals.keyBy((total) => total.windowStart).window(TumblingEventTimeWindows.of(minutes(1))).maxBy('amount'),
    });
    const clock = { now: 1_000_000 };
    const runtime = new PipelineRuntime(
      pipeline,
      { tableName: name, snapshotBucket: name, kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo, s3: environment().s3 },
      { clock: () => clock.now },
    );
    const driver = new LambdaDriver(runtime, clock);
    const [repartition = ''] = runtime.plan.stages.flatMap((stage) => (stage.input.kind === 'repartition' ? [stage.input.topic] : []));
    await environment().admin.ensureTopics([{ topic: repartition, partitions: 2 }]);
    const writtenFrom = Date.now();
    await driver.drain();
    await driver.checkpoint();

    const reader = new CommittedRangeReader({ brokers: testBrokers() });
    const records = [];
    for (const { partition, stable } of (await environment().admin.describeTopics([repartition])).flatMap((d) => d.partitions)) {
      records.push(...(await reader.read({ topic: repartition, partition, from: 0, to: Number(stable) })));
    }
    await reader.close();
    await driver.close();
    await runtime.close();

    expect(records.length, 'window totals sent to the second stage').toBeGreaterThan(5);
    for (const record of records) {
      const { t } = JSON.parse(record.value?.toString('utf8') ?? '{}') as { t: number };
      expect(t, 'event time, in the value').toBeLessThan(Date.UTC(2025, 11, 1));
      expect(record.timestamp, 'write time, as the timestamp').toBeGreaterThanOrEqual(writtenFrom - 1_000);
    }
  });
});
