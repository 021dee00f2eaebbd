// `sluice status`, `savepoint` and `restore` against a pipeline that ran: configured by the
// same environment variables as the pipeline's functions, with clear exit codes and errors.
import { afterEach, describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { sluice } from '../../helpers/cli.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { LambdaDriver } from '../../../lib/testing/lambda-driver.js';
import { deleteRecordsBefore } from '../../helpers/kafka-io.js';
import { generateOrders } from '../../helpers/orders.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const PIPELINE_FILE = 'test/fixtures/pipelines/order-totals-from-environment.ts';
const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
});

describe('sluice status, savepoint and restore', () => {
  it('show a pipeline that ran, save it and restore it', async () => {
    const name = uniqueName('cli');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([
      { topic: input, partitions: 2 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    // Past the first 2,000, a few orders come too late for their window: status counts them.
    const orders = generateOrders({ count: 2_400, seed: 4, categories: 4, lateFraction: 0.05 });
    const late = orders.filter((o) => o.late).length;
    expect(late).toBeGreaterThan(5);
    await writer.write(orders.map(({ late: _late, ...o }) => ({ topic: input, key: o.category, value: JSON.stringify(o) })));
    await writer.flush();
    await writer.close();
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    await ensureBucket(createS3Client(environment().s3), name);
    const config = {
      tableName: name,
      snapshotBucket: name,
      kafka: { brokers: testBrokers() },
      dynamodb: environment().dynamo,
      s3: environment().s3,
    };
    const clock = { now: Date.now() };
    const runtime = new PipelineRuntime(orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }), config, {
      clock: () => clock.now,
    });
    const driver = new LambdaDriver(runtime, clock);
    await driver.drain();
    const checkpoint = await driver.checkpoint();
    await driver.close();
    await runtime.close();

    Object.assign(process.env, {
      TEST_PIPELINE_NAME: name,
      KAFKA_BROKERS: testBrokers().join(','),
      SLUICE_STATE_TABLE: name,
      SLUICE_SNAPSHOT_BUCKET: name,
      SLUICE_DYNAMODB_ENDPOINT: environment().dynamo.endpoint,
      SLUICE_S3_ENDPOINT: environment().s3.endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    });
    const status = await sluice('status', PIPELINE_FILE);
    expect(status.stderr).toBe('');
    expect(status.stdout).toContain(`committed ${checkpoint}`);
    expect(status.stdout).toMatch(new RegExp(`stage-1 ${input}/0 +\\d+ +0 +${checkpoint} +\\d+ +0 0 open, \\d+ committed, 0 lost`));
    const json = JSON.parse((await sluice('status', PIPELINE_FILE, '--json')).stdout) as { shards: { lag: number; dropped: { late: number; skipped: number } }[] };
    expect(json.shards.map((s) => s.lag)).toEqual([0, 0]);
    expect(json.shards.reduce((sum, s) => sum + s.dropped.late, 0), 'every late order counted once').toBe(late);
    expect(status.stdout).not.toContain('Committed output deleted');

    // The log start moves past the committed output, as retention moves it: status says so.
    await deleteRecordsBefore(testBrokers(), `${name}-out`, 0, (await environment().admin.describeTopics([`${name}-out`]))[0]?.partitions[0]?.stable ?? '0');
    const flagged = await sluice('status', PIPELINE_FILE);
    expect(flagged.stdout).toMatch(
      new RegExp(`Committed output deleted from the log[^\\n]*\\n  ${name}-out/0: checkpoint ${checkpoint} \\(20\\d\\d-[^)]+\\) wrote offset \\d+, and the log now starts at \\d+\\.`),
    );
    expect(flagged.stdout).toContain('setRecordTimestamp(RecordTimestamp.WRITE_TIME)');
    const flaggedJson = JSON.parse((await sluice('status', PIPELINE_FILE, '--json')).stdout) as { deletedOutput: { topic: string; checkpoint: number }[] };
    expect(flaggedJson.deletedOutput).toEqual([expect.objectContaining({ topic: `${name}-out`, partition: 0, checkpoint })]);

    expect(await sluice('resume', PIPELINE_FILE)).toEqual({ code: 0, stdout: 'No shard is failing at a record: nothing to resume.\n', stderr: '' });

    expect(await sluice('savepoint', PIPELINE_FILE, '--name', 'before-upgrade')).toEqual({
      code: 0,
      stdout: `Savepoint before-upgrade written from checkpoint ${checkpoint} (savepoints/before-upgrade/manifest.json)\n`,
      stderr: '',
    });
    expect((await sluice('savepoint', PIPELINE_FILE, '--name', 'before-upgrade')).stderr).toContain(
      'Savepoint before-upgrade exists already; choose another name',
    );
    const restored = await sluice('restore', PIPELINE_FILE, '--savepoint', 'before-upgrade');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^Restored savepoint before-upgrade into 2 shards: 4 keys \([1-4] state items deleted first\)/);

    expect(await sluice('restore', PIPELINE_FILE, '--checkpoint', '99')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Checkpoint 99 has no manifest') as unknown,
    });
    expect((await sluice('restore', PIPELINE_FILE)).code).toBe(2);
    process.env.SLUICE_STATE_TABLE = `${name}-never-deployed`;
    expect((await sluice('status', PIPELINE_FILE)).stderr).toContain(
      `The state table ${name}-never-deployed does not exist: the pipeline has not been deployed to this account and region (sluice deploy)`,
    );
    delete process.env.SLUICE_SNAPSHOT_BUCKET;
    expect((await sluice('status', PIPELINE_FILE)).stderr).toContain("SLUICE_SNAPSHOT_BUCKET is not set: the name of the pipeline's S3 snapshot bucket");
  }, 120_000);
});
