// A packaged pipeline's functions under Lambda's own runtime (test/helpers/lambda-runtime.ts):
// each zip unzipped and run by the emulator with the template's handler, environment, memory
// and timeout, the emulators' endpoints and a broker in place of AWS's, and a stand-in for
// Lambda's Invoke API and EventBridge through which the functions call each other.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createDocumentClient, createS3Client, type AwsClientOptions } from '../../lib/aws/clients.js';
import { ensureBucket } from '../../lib/snapshot/s3-store.js';
import { ensureStateTable } from '../../lib/state/dynamodb-shard-store.js';
import { EmulatedFunction, type InvocationOutcome } from './lambda-runtime.js';
import type { ScheduleEnvironment } from './runtime-schedule.js';
import { ofType, run, type Template } from './serverless-package.js';

/** The pipeline file the deployment tests package: order totals, named by TEST_PIPELINE_NAME. */
export const ORDER_TOTALS_FROM_ENVIRONMENT = 'test/fixtures/pipelines/order-totals-from-environment.ts';

/** What the deployment would have made for pipeline `name`: its state table, snapshot bucket, input and output topics. */
export async function createPipelineResources(name: string, { admin, dynamo, s3 }: Pick<ScheduleEnvironment, 'admin' | 'dynamo' | 's3'>, partitions: number): Promise<void> {
  await ensureStateTable(createDocumentClient(dynamo), name);
  await ensureBucket(createS3Client(s3), name);
  await admin.ensureTopics([
    { topic: `${name}-orders`, partitions },
    { topic: `${name}-out`, partitions },
  ]);
}

/** The function's result, or its error thrown, as Lambda's synchronous Invoke reports them. */
export function resultOf(outcome: InvocationOutcome): unknown {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.result;
}

export interface PackagedPipelineOptions {
  readonly name: string;
  readonly folder: string;
  readonly template: Template;
  readonly brokers: readonly string[];
  readonly dynamo: AwsClientOptions;
  readonly s3: AwsClientOptions;
  /** Python, to unzip as Lambda does without a zip tool of the machine's. */
  readonly python: string;
  /** Timeouts other than the template's, in seconds, by function key (`coordinator`, ...). */
  readonly timeoutsSeconds?: Readonly<Record<string, number>>;
}

interface FunctionSpec {
  readonly root: string;
  readonly handler: string;
  readonly env: Record<string, string>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

export class PackagedPipeline {
  /** The running functions by key: `processorstage1`, `coordinator`, `commit`. */
  readonly functions = new Map<string, EmulatedFunction>();
  /** The invocations through the Invoke API stand-in, and their errors. */
  readonly invocations: Promise<unknown>[] = [];
  readonly invocationErrors: string[] = [];
  /** The function names invoked through it. */
  readonly invoked = new Set<string>();
  /** EventBridge's actions called (`EnableRule`, `DisableRule`). */
  readonly scheduleCalls: string[] = [];
  private readonly specs = new Map<string, FunctionSpec>();
  private readonly extra: EmulatedFunction[] = [];

  private constructor(private readonly api: Server) {}

  static async start({ name, folder, template, brokers, dynamo, s3, python, timeoutsSeconds = {} }: PackagedPipelineOptions): Promise<PackagedPipeline> {
    const api = createServer();
    const pipeline = new PackagedPipeline(api);
    api.on('request', (request, response) => pipeline.serve(request, response));
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    for (const [logicalId, resource] of ofType(template, 'AWS::Lambda::Function')) {
      const key = logicalId.replace(/LambdaFunction$/, '').toLowerCase();
      const root = join(folder, key);
      await run(python, ['-m', 'zipfile', '-e', join(folder, `${key}.zip`), root]);
      const handler = String(resource.Properties.Handler);
      // The CLI's offline mode and TypeScript loader are dependencies of the package, never of a function.
      const bundle = readFileSync(join(root, `${handler.replace(/\.[^.]+$/, '')}.mjs`), 'utf8');
      expect(['dynalite', 's3rver', 'tsx/esm'].filter((module) => bundle.includes(module)), `${key}'s bundle`).toEqual([]);
      const variables = (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      const env: Record<string, string> = {
        ...Object.fromEntries(Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
        SLUICE_STATE_TABLE: name,
        SLUICE_SNAPSHOT_BUCKET: name,
        KAFKA_BROKERS: brokers.join(','),
        KAFKA_AUTH: 'NONE',
        SLUICE_DYNAMODB_ENDPOINT: dynamo.endpoint ?? '',
        SLUICE_S3_ENDPOINT: s3.endpoint ?? '',
        AWS_ENDPOINT_URL_LAMBDA: endpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint,
        AWS_REGION: 'us-east-1',
        // The emulators' keys (s3rver checks them), found by the default provider chain as Lambda's role's would be.
        AWS_ACCESS_KEY_ID: s3.credentials?.accessKeyId ?? '',
        AWS_SECRET_ACCESS_KEY: s3.credentials?.secretAccessKey ?? '',
        TEST_PIPELINE_NAME: name,
        PATH: process.env.PATH ?? '',
      };
      const spec = { root, handler, env, timeoutSeconds: timeoutsSeconds[key] ?? Number(resource.Properties.Timeout), memoryMb: Number(resource.Properties.MemorySize) };
      pipeline.specs.set(key, spec);
      pipeline.functions.set(key, await EmulatedFunction.start(spec));
    }
    return pipeline;
  }

  /** The running function `key`. */
  function(key: string): EmulatedFunction {
    const fn = this.functions.get(key);
    if (!fn) throw new Error(`the package has no ${key}; it has ${[...this.functions.keys()].join(', ')}`);
    return fn;
  }

  /** A second execution environment of function `key`, as Lambda starts one when the first is busy or gone. */
  async anotherInstance(key: string, timeoutSeconds?: number): Promise<EmulatedFunction> {
    const spec = this.specs.get(key);
    if (!spec) throw new Error(`the package has no ${key}`);
    const fn = await EmulatedFunction.start({ ...spec, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) });
    this.extra.push(fn);
    return fn;
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    // EventBridge too: the coordinator turns its rule off at rest and on while awake.
    const target = request.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('AWSEvents.')) {
      request.resume();
      this.scheduleCalls.push(target.slice('AWSEvents.'.length));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end('{}');
      return;
    }
    const functionName = decodeURIComponent(/\/functions\/([^/]+)\/invocations/.exec(request.url ?? '')?.[1] ?? '');
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const fn = [...this.functions].find(([key]) => functionName.endsWith(`-${key}`))?.[1];
      if (!fn) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ Type: 'User', message: `no function ${functionName}` }));
        return;
      }
      this.invoked.add(functionName);
      this.invocations.push(
        fn
          .invoke(JSON.parse(body || '{}'))
          .then(resultOf)
          .catch((error: unknown) => this.invocationErrors.push(String(error))),
      );
      response.writeHead(202).end();
    });
  }

  /** Every function's log, for a failure's message. */
  logs(): string {
    return [...this.functions].map(([key, fn]) => `${key}:\n${fn.logs.slice(-4_000)}`).join('\n');
  }

  stop(): void {
    for (const fn of [...this.functions.values(), ...this.extra]) fn.stop();
    this.api.close();
  }
}
