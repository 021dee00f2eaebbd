// One offline instance per pipeline: a lock file in the state folder, and heartbeats on the
// broker, where two instances with different state folders would otherwise both consume the
// pipeline's input and both write its output (exactly-once broken, silently).
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CommittedRangeReader, createRecordWriter, type KafkaAdmin, type RecordWriter } from '../kafka/index.js';

/** How often a running instance says so. */
export const HEARTBEAT_MS = 2_000;
/** An instance silent for this long is taken as stopped: one killed with SIGKILL says nothing more. */
export const HEARTBEAT_STALE_MS = 10_000;
/** How far back a start looks for other instances' heartbeats. */
const TAIL_RECORDS = 50;

interface Holder {
  readonly instance: string;
  readonly host: string;
  readonly pid: number;
  readonly stateDir: string;
  readonly running: boolean;
  /** What holds the state folder: `sluice offline`, or a command that opened it while none ran. */
  readonly command?: string;
}

export class SecondInstanceError extends Error {
  override readonly name = 'SecondInstanceError';
}

/** The broker-side topic where one pipeline's offline instances announce themselves. */
export function instancesTopic(pipeline: string): string {
  return `${pipeline}-offline-instances`;
}

/** Whether `holder`'s process may still run: on another host it may; on this one, if its pid answers and is not ours. */
export function mayBeRunning(holder: { readonly host: string; readonly pid: number }): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const lockFileOf = (stateDir: string) => join(stateDir, 'instance.lock');

/** The process holding a state folder, when it may still run. */
export function stateFolderHolder(stateDir: string): Holder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockFileOf(stateDir), 'utf8')) as Holder;
    return mayBeRunning(holder) ? holder : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Takes a pipeline's state folder for this process, for `command`: refused while another
 * process that may still run holds it. Returns the release.
 */
export function lockStateFolder(pipeline: string, stateDir: string, command: string): () => void {
  const holder: Holder = { instance: randomUUID(), host: hostname(), pid: process.pid, stateDir, running: true, command };
  const file = lockFileOf(stateDir);
  try {
    writeFileSync(file, JSON.stringify(holder), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const previous = stateFolderHolder(stateDir);
    if (previous) {
      const by = previous.command ?? OFFLINE_COMMAND;
      throw new SecondInstanceError(
        by === OFFLINE_COMMAND
          ? `Pipeline ${pipeline} already runs on the state in ${stateDir} (pid ${previous.pid} on ${previous.host}). ` +
              `Stop that instance first; if no such process runs, delete ${file}.`
          : `Pipeline ${pipeline}'s state in ${stateDir} is open in ${by} (pid ${previous.pid} on ${previous.host}): start again once it is done.`,
      );
    }
    // Left by a process that was killed: the state is ours.
    writeFileSync(file, JSON.stringify(holder));
  }
  return () => {
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as Holder).instance === holder.instance) rmSync(file);
    } catch {
      // Already gone.
    }
  };
}

const OFFLINE_COMMAND = 'sluice offline';

export interface InstanceLockOptions {
  readonly pipeline: string;
  readonly stateDir: string;
  readonly kafka: { readonly brokers: string[] };
  readonly admin: KafkaAdmin;
}

/** Held while an offline session runs; {@link InstanceLock.acquire} refuses a second instance with what to do. */
export class InstanceLock {
  private readonly holder: Holder;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private releaseStateFolder: () => void = () => undefined;

  private constructor(
    private readonly options: InstanceLockOptions,
    private readonly writer: RecordWriter,
  ) {
    this.holder = { instance: randomUUID(), host: hostname(), pid: process.pid, stateDir: options.stateDir, running: true };
  }

  static async acquire(options: InstanceLockOptions): Promise<InstanceLock> {
    const lock = new InstanceLock(options, createRecordWriter('AT_LEAST_ONCE', options.kafka));
    try {
      lock.releaseStateFolder = lockStateFolder(options.pipeline, options.stateDir, OFFLINE_COMMAND);
    } catch (error) {
      await lock.writer.close();
      throw error;
    }
    try {
      await lock.claimOnBroker();
    } catch (error) {
      await lock.release();
      throw error;
    }
    lock.timer = setInterval(() => {
      lock.beating = lock.beating.then(() => lock.beat(true)).catch(() => undefined);
    }, HEARTBEAT_MS);
    lock.timer.unref();
    return lock;
  }

  /**
   * Announces this instance, then reads back what came before it: a fresh heartbeat of another
   * instance that may still run refuses this one. Of two starting at once, the later
   * announcement gives way.
   */
  private async claimOnBroker(): Promise<void> {
    const topic = instancesTopic(this.options.pipeline);
    const { admin } = this.options;
    await admin.ensureTopics([{ topic, partitions: 1, configs: { 'retention.ms': String(60 * 60_000), 'segment.ms': String(10 * 60_000) } }]);
    const [description] = await admin.describeTopics([topic]);
    const partition = description?.partitions[0];
    const from = Math.max(Number(partition?.low ?? 0), Number(partition?.stable ?? 0) - TAIL_RECORDS);
    await this.beat(true);
    const reader = new CommittedRangeReader(this.options.kafka);
    try {
      const latest = new Map<string, { holder: Holder; at: number }>();
      for (let next = from, mine = false; !mine; ) {
        const polled = await reader.readAvailable(topic, 0, next, TAIL_RECORDS);
        if (polled.records.length === 0) throw new Error(`This instance's announcement on ${topic} could not be read back`);
        for (const record of polled.records) {
          const holder = JSON.parse(record.value?.toString('utf8') ?? '{}') as Holder;
          if (holder.instance === this.holder.instance) {
            mine = true;
            break;
          }
          latest.set(holder.instance, { holder, at: record.timestamp });
        }
        next = polled.next;
      }
      const now = Date.now();
      for (const { holder, at } of latest.values()) {
        if (!holder.running || now - at > HEARTBEAT_STALE_MS || !mayBeRunning(holder)) continue;
        throw new SecondInstanceError(
          `Another instance of pipeline ${this.options.pipeline} runs on this broker (pid ${holder.pid} on ${holder.host}, state in ${holder.stateDir}; its last heartbeat ` +
            `came ${Math.round((now - at) / 1_000)} s ago). Two instances would both process the input and break exactly-once. ` +
            `Stop it first: a stopped instance says so at once, and one killed on another host counts as stopped ` +
            `${HEARTBEAT_STALE_MS / 1_000} s after its last heartbeat.`,
        );
      }
    } finally {
      await reader.close();
    }
  }

  private async beat(running: boolean): Promise<void> {
    await this.writer.write([
      { topic: instancesTopic(this.options.pipeline), partition: 0, key: null, value: JSON.stringify({ ...this.holder, running }), timestamp: Date.now() },
    ]);
    await this.writer.flush();
  }

  /** Says on the broker that this instance stopped, so that the next may start at once, and frees the state folder. */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating;
    await this.beat(false).catch(() => undefined);
    await this.writer.close();
    this.releaseStateFolder();
  }
}
