// Where an offline pipeline keeps its state, and how `sluice status`, `savepoint` and
// `restore --offline` reach it: through the running instance's emulators (their endpoints are
// in the state folder while it runs), or through emulators of their own on the folder.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { AwsClientOptions } from '../aws/clients.js';
import type { RuntimeConfig } from '../aws/runtime.js';
import { brokersFromEnvironment } from '../kafka/connection.js';
import { startDynamoDbEmulator, startS3Emulator } from './emulators.js';
import { lockStateFolder, stateFolderHolder } from './instance-lock.js';
import { startLocalBroker, stopLocalBroker } from './kafka-broker.js';

/** The state folder of an offline pipeline: `--state-dir`, else `.sluice/offline/<pipeline>`. */
export function offlineStateDir(pipeline: string, stateDir?: string): string {
  return resolve(stateDir ?? join('.sluice', 'offline', pipeline));
}

/** The table and bucket names offline mode gives a pipeline. */
export function offlineNames(pipeline: string): { tableName: string; snapshotBucket: string } {
  return { tableName: `${pipeline}-state`, snapshotBucket: `${pipeline}-snapshots` };
}

interface RunningEndpoints {
  readonly pid: number;
  readonly host: string;
  readonly brokers: string[];
  readonly dynamodb: AwsClientOptions;
  readonly s3: AwsClientOptions;
}

const endpointsFile = (stateDir: string) => join(stateDir, 'endpoints.json');

/** Written by a running offline session; the function it returns removes it, when the session stops. */
export function writeRunningEndpoints(stateDir: string, endpoints: Omit<RunningEndpoints, 'pid' | 'host'>): () => Promise<void> {
  writeFileSync(endpointsFile(stateDir), JSON.stringify({ ...endpoints, pid: process.pid, host: hostname() }));
  return () => rm(endpointsFile(stateDir), { force: true });
}

function runningEndpoints(stateDir: string): RunningEndpoints | undefined {
  if (!existsSync(endpointsFile(stateDir))) return undefined;
  return JSON.parse(readFileSync(endpointsFile(stateDir), 'utf8')) as RunningEndpoints;
}

export interface OfflineRuntimeConfig {
  readonly config: RuntimeConfig;
  /** Whether `sluice offline` is running on this state now. */
  readonly running: boolean;
  /** Stops what was started to reach the state. */
  close(): Promise<void>;
}

/**
 * The runtime configuration of the offline pipeline `pipeline`: the emulators of the instance
 * running on `stateDir`, or, when none runs, emulators started on the folder (and the local
 * broker, unless KAFKA_BROKERS names one), which `close` stops.
 */
export async function offlineRuntimeConfig(pipeline: string, stateDir: string, command: string, log: (line: string) => void): Promise<OfflineRuntimeConfig> {
  if (!existsSync(join(stateDir, 'dynamodb'))) {
    throw new Error(`Pipeline ${pipeline} has never run offline: there is no state in ${stateDir}. Start it with sluice offline, or give its --state-dir.`);
  }
  const names = offlineNames(pipeline);
  const holder = stateFolderHolder(stateDir);
  if (holder) {
    const running = runningEndpoints(stateDir);
    if (!running || running.pid !== holder.pid) {
      throw new Error(`Pipeline ${pipeline}'s state in ${stateDir} is held by pid ${holder.pid} (${holder.command ?? 'sluice offline'}), which is starting or busy: try again in a moment`);
    }
    return { config: { ...names, kafka: { brokers: running.brokers }, dynamodb: running.dynamodb, s3: running.s3 }, running: true, close: () => Promise.resolve() };
  }
  // Held for the command's while, so that sluice offline does not open the same files meanwhile.
  const release = lockStateFolder(pipeline, stateDir, command);
  const stops: (() => Promise<void>)[] = [
    () => {
      release();
      return Promise.resolve();
    },
  ];
  const close = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    let brokers = brokersFromEnvironment();
    if (!brokers) {
      const broker = await startLocalBroker({ log: (line) => log(`[kafka] ${line}`) });
      brokers = broker.brokers;
      if (broker.started) {
        stops.push(async () => {
          await stopLocalBroker({ log: (line) => log(`[kafka] ${line}`) });
        });
      }
    }
    const dynamodb = await startDynamoDbEmulator(0, join(stateDir, 'dynamodb'));
    stops.push(() => dynamodb.close());
    const s3 = await startS3Emulator(join(stateDir, 's3'));
    stops.push(() => s3.close());
    return { config: { ...names, kafka: { brokers }, dynamodb: dynamodb.clientOptions, s3: s3.clientOptions }, running: false, close };
  } catch (error) {
    await close();
    throw error;
  }
}
