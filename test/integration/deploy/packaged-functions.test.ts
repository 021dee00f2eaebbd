// What ships is what is tested: `sluice deploy --package-only` builds the zips, and each function is
// unzipped and run as Lambda's Node.js runtime runs it (a process of its own, the template's
// handler and environment, with the emulators' endpoints and the local broker in place of
// AWS's). MSK events from the emulated event source mapping go to the processor, the
// coordinator runs on a schedule with Lambda's remaining time, and the functions invoke each
// other through a stand-in for Lambda's Invoke API; the read_committed output must be exact.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient, createS3Client } from '../../../lib/aws/clients.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { EventSourceMapping } from '../../../lib/offline/event-source-mapping.js';
import { ensureBucket } from '../../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import type { Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { ofType, run, usePackaging } from '../../helpers/serverless-package.js';

const environment = useRuntimeEnvironment();
const packageFor = usePackaging();
const HOST = 'test/fixtures/scripts/lambda-host.js';
const PIPELINE_FILE = 'test/fixtures/pipelines/order-totals-from-environment.ts';
const PARTITIONS = 2;

/** One unzipped function in its own process. */
class PackagedFunction {
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  readonly ready: Promise<void>;

  /** Everything the function has logged. */
  logs = '';

  constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.logs += chunk.toString('utf8')));
    child.stdout?.on('data', (chunk: Buffer) => (this.logs += chunk.toString('utf8')));
    this.ready = new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the function exited (${code}) before it was ready`)));
      child.on('message', (message: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
        if (message.ready) {
          resolve();
          return;
        }
        const call = this.pending.get(message.id ?? -1);
        this.pending.delete(message.id ?? -1);
        if (message.error !== undefined) call?.reject(new Error(message.error));
        else call?.resolve(message.result);
      });
    });
  }

  invoke(event: unknown, remainingMs = 60_000): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, event, remainingMs });
    });
  }

  stop(): void {
    this.child.kill('SIGKILL');
  }
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const started: PackagedFunction[] = [];
let lambdaApi: Server | undefined;
afterAll(() => {
  for (const fn of started) fn.stop();
  lambdaApi?.close();
});

describe('the packaged functions', () => {
  it('run from their zips as Lambda runs them, and give exact read_committed output', async () => {
    const name = uniqueName('packaged');
    const { folder, template } = await packageFor(PIPELINE_FILE, 'msk', { TEST_PIPELINE_NAME: name });
    const { admin, dynamo, s3 } = environment();
    await ensureStateTable(createDocumentClient(dynamo), name);
    await ensureBucket(createS3Client(s3), name);
    await admin.ensureTopics([
      { topic: `${name}-orders`, partitions: PARTITIONS },
      { topic: `${name}-out`, partitions: PARTITIONS },
    ]);

    // A stand-in for Lambda's Invoke API: the coordinator ticks processors and starts the commit function through it.
    const functions = new Map<string, PackagedFunction>();
    const invocations: Promise<unknown>[] = [];
    const invoked = new Set<string>();
    const invocationErrors: string[] = [];
    const scheduleCalls: string[] = [];
    lambdaApi = createServer((request, response) => {
      // EventBridge too: the coordinator turns its rule off at rest and on while awake.
      const target = request.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith('AWSEvents.')) {
        request.resume();
        scheduleCalls.push(target.slice('AWSEvents.'.length));
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end('{}');
        return;
      }
      const functionName = decodeURIComponent(/\/functions\/([^/]+)\/invocations/.exec(request.url ?? '')?.[1] ?? '');
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        const fn = [...functions].find(([key]) => functionName.endsWith(`-${key}`))?.[1];
        if (!fn) {
          response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ Type: 'User', message: `no function ${functionName}` }));
          return;
        }
        invoked.add(functionName);
        invocations.push(fn.invoke(JSON.parse(body || '{}')).catch((error: unknown) => invocationErrors.push(String(error))));
        response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => lambdaApi?.listen(0, '127.0.0.1', resolve));
    const lambdaEndpoint = `http://127.0.0.1:${(lambdaApi.address() as AddressInfo).port}`;

    for (const [logicalId, resource] of ofType(template, 'AWS::Lambda::Function')) {
      const key = logicalId.replace(/LambdaFunction$/, '').toLowerCase();
      const unzipped = join(folder, key);
      await run(inject('pythonTools').python, ['-m', 'zipfile', '-e', join(folder, `${key}.zip`), unzipped]);
      // The CLI's offline mode and TypeScript loader are dependencies of the package, never of a function.
      const bundle = readFileSync(join(unzipped, `${String(resource.Properties.Handler).replace(/\.[^.]+$/, '')}.mjs`), 'utf8');
      expect(['dynalite', 's3rver', 'tsx/esm'].filter((name) => bundle.includes(name)), `${key}'s bundle`).toEqual([]);
      const variables = (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      const env: Record<string, string> = {
        ...Object.fromEntries(Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
        SLUICE_STATE_TABLE: name,
        SLUICE_SNAPSHOT_BUCKET: name,
        KAFKA_BROKERS: testBrokers().join(','),
        KAFKA_AUTH: 'NONE',
        SLUICE_DYNAMODB_ENDPOINT: dynamo.endpoint ?? '',
        SLUICE_S3_ENDPOINT: s3.endpoint ?? '',
        AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: lambdaEndpoint,
        AWS_REGION: 'us-east-1',
        // The emulators' keys (s3rver checks them), found by the default provider chain as Lambda's role's would be.
        AWS_ACCESS_KEY_ID: s3.credentials?.accessKeyId ?? '',
        AWS_SECRET_ACCESS_KEY: s3.credentials?.secretAccessKey ?? '',
        TEST_PIPELINE_NAME: name,
        PATH: process.env.PATH ?? '',
      };
      const fn = new PackagedFunction(fork(HOST, [unzipped, String(resource.Properties.Handler)], { env, execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }));
      started.push(fn);
      functions.set(key, fn);
    }
    expect([...functions.keys()].sort()).toEqual(['commit', 'coordinator', 'processorstage1']);
    await Promise.all([...functions.values()].map((fn) => fn.ready));

    const orders = generateOrders({ count: 1_500, seed: 12, categories: 4, lateFraction: 0 });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      [...orders, ...closingOrders(orders, PARTITIONS)].map(({ late: _late, ...o }) => ({ topic: `${name}-orders`, key: o.category, value: JSON.stringify(o) })),
    );
    await writer.close();

    const [processor, coordinator] = ['processorstage1', 'coordinator'].map((key) => {
      const fn = functions.get(key);
      if (!fn) throw new Error(`the package has no ${key}`);
      return fn;
    }) as [PackagedFunction, PackagedFunction];
    const batchErrors: string[] = [];
    const mapping = new EventSourceMapping({
      kafka: { brokers: testBrokers() },
      topic: `${name}-orders`,
      partitions: Array.from({ length: PARTITIONS }, (_, p) => p),
      groupId: name,
      batchSize: 500,
      handler: (event) => processor.invoke(event),
      onError: (error) => batchErrors.push(String(error)),
    });
    await mapping.start();
    // The schedule: the coordinator every few seconds, each run given a few seconds of Lambda time.
    const scheduling = { on: true };
    const schedule = (async () => {
      while (scheduling.on) {
        await coordinator.invoke({ source: 'aws.events' }, 3_000).catch((error: unknown) => invocationErrors.push(String(error)));
      }
    })();
    const expected = expectedTotals(orders, minutes(5));
    try {
      const consumed = await consumeAll(`${name}-out`, { expected: expected.size, timeoutMs: 120_000, settleMs: 2_000 });
      const totals = consumed.map((message) => JSON.parse(message.value ?? '') as Total);
      expect(new Map(totals.map((t) => [`${t.category}@${t.windowStart}`, t.amount]))).toEqual(expected);
      expect(totals).toHaveLength(expected.size);

      // A record that is not JSON and holds a card number fails its batch (the default policy):
      // the error names the record, and neither it nor any log line quotes the record.
      const card = '4111-1111-1111-1111';
      const bad = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
      await bad.write([{ topic: `${name}-orders`, partition: 0, key: 'category-0', value: `card=${card}` }]);
      await bad.close();
      await until(() => batchErrors.length >= 2, 60_000);
      expect(batchErrors[0]).toMatch(new RegExp(`Record ${name}-orders/0@\\d+: orders failed: the value \\(24 bytes\\) is not valid JSON\\.`));
      expect(processor.logs).toContain('is not valid JSON');
      expect([...batchErrors, ...[...functions.values()].map((fn) => fn.logs)].filter((text) => text.includes(card))).toEqual([]);
    } finally {
      scheduling.on = false;
      await schedule;
      await mapping.stop();
      await Promise.all(invocations);
    }
    // The coordinator reached the commit function through Lambda's Invoke API, by the name the template gives it.
    expect([...invoked]).toContain(`sluice-${name}-dev-commit`);
    // Awake, each coordinator invocation keeps its rule on (it turns it off only at rest).
    expect(scheduleCalls).toContain('EnableRule');
    expect(invocationErrors, [...functions].map(([key, fn]) => `${key}:\n${fn.logs.slice(-4_000)}`).join('\n')).toEqual([]);
  }, 300_000);
});
