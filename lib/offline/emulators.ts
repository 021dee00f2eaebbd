import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import type { AwsClientOptions } from '../aws/clients.js';
import { ensurePythonTools } from './python-tools.js';

/** An emulator running in this process, and how to reach it. */
export interface Emulator {
  readonly clientOptions: AwsClientOptions;
  close(): Promise<void>;
}

const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * DynamoDB (dynalite) on 127.0.0.1, in memory or, given `path`, in a LevelDB folder that
 * outlives the process. It has no TransactWriteItems, which Sluice does not use; conditional
 * writes and strongly consistent reads behave as DynamoDB's.
 */
export async function startDynamoDbEmulator(port = 0, path?: string): Promise<Emulator> {
  const server = dynalite(dynaliteOptions(path));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    clientOptions: localClientOptions(bound),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Tables without delays; in memory, or in LevelDB under `path`. */
function dynaliteOptions(path: string | undefined) {
  return { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path ? { path } : {}) };
}

function localClientOptions(port: number): AwsClientOptions {
  return { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: LOCAL_CREDENTIALS };
}

// CommonJS, evaluated by the worker: dynalite is loaded from where this module resolves it.
const DYNALITE_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const server = require(workerData.dynalite)(workerData.options);
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.once('message', () => server.close(() => parentPort.close()));
`;

/**
 * dynalite as startDynamoDbEmulator starts it, but on a worker thread of its own, so that
 * emulating DynamoDB does not take CPU from the code under load: for benchmarks whose state
 * is large. With `path`, items live in LevelDB on disk rather than on the JavaScript heap.
 */
export async function startDynamoDbEmulatorThread(path?: string): Promise<Emulator> {
  const worker = new Worker(DYNALITE_THREAD, {
    eval: true,
    workerData: { dynalite: createRequire(import.meta.url).resolve('dynalite'), options: dynaliteOptions(path) },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    void exited.then(() => reject(new Error('The DynamoDB emulator thread exited before it listened')));
  });
  return {
    clientOptions: localClientOptions(port),
    close: async () => {
      worker.postMessage('close');
      await exited;
    },
  };
}

/**
 * S3 on 127.0.0.1 (s3rver), storing objects under `directory` (a fresh temporary folder by
 * default, removed on close). It ignores conditional writes: Sluice's snapshot protocol
 * must not depend on them.
 */
export async function startS3Emulator(directory?: string, port = 0): Promise<Emulator> {
  const folder = directory ?? mkdtempSync(join(tmpdir(), 'sluice-s3-'));
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: folder });
  const { port: bound } = await server.run();
  return {
    clientOptions: localClientOptions(bound),
    close: async () => {
      await server.close();
      if (!directory) rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A free TCP port on 127.0.0.1, for a server that cannot be told to pick one. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * moto's server app, answering one request at a time. \`python -m moto.server\` serves requests
 * on threads, and moto's backends do not lock a conditional write's check and its write: two
 * racing conditional PutItems could both succeed there, which DynamoDB never allows.
 */
const MOTO_SERVER = [
  'import sys',
  'from werkzeug.serving import run_simple',
  'from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app',
  'run_simple(sys.argv[1], int(sys.argv[2]), DomainDispatcherApplication(create_backend_app), threaded=False)',
].join('\n');

/**
 * moto's server on 127.0.0.1: a second, stricter emulator of DynamoDB and S3, to check that
 * what passes on dynalite is not an accident of its leniency. Runs as a child process of
 * `python` (by default the project's environment of requirements-dev.txt, made on first use),
 * stopped on close.
 */
export async function startMotoServer(python?: string, startTimeoutMs = 30_000): Promise<Emulator> {
  python ??= (await ensurePythonTools()).python;
  const port = await freePort();
  const child = spawn(python, ['-c', MOTO_SERVER, '127.0.0.1', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`moto's server exited while starting under ${python} (does it have moto[server] from requirements-dev.txt?):\n${stderr}`);
    }
    try {
      await fetch(`${endpoint}/moto-api/`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`moto's server did not answer at ${endpoint} within ${startTimeoutMs} ms:\n${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    clientOptions: { endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS },
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
