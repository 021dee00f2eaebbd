import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KafkaAdmin } from '../kafka/admin.js';
import { brokersFromEnvironment } from '../kafka/connection.js';

/**
 * Launches a single-node Apache Kafka broker (KRaft, broker and controller in one JVM) on
 * 127.0.0.1 for tests and offline mode. The broker's jars come from Maven Central through
 * infra/kafka/pom.xml and are cached; its data and process id live in a state folder, so a
 * second start finds and reuses a running broker.
 */
export interface LocalBrokerOptions {
  /** Client port; the controller listens on port + 1. Default 9092 or `SLUICE_KAFKA_PORT`. */
  readonly port?: number;
  /** Where the broker's data, log and pid file go. Default `.sluice/kafka` in the working folder. */
  readonly stateDir?: string;
  /** Where the broker's jars are cached. Default `~/.cache/sluice` or `SLUICE_CACHE_DIR`. */
  readonly cacheDir?: string;
  /** The broker's `transaction.max.timeout.ms`. */
  readonly transactionMaxTimeoutMs?: number;
  /** How long to wait for the broker to answer after starting it. */
  readonly startTimeoutMs?: number;
  /** Progress lines (fetching, formatting, starting); silent by default. */
  readonly log?: (line: string) => void;
  /**
   * Start from empty storage when a new broker has to be started (a running one is still
   * reused as it is). Test runs use it: a broker that reloads the topics of every earlier run
   * answers before it hosts all their partitions again.
   */
  readonly fresh?: boolean;
}

export interface LocalBroker {
  readonly brokers: string[];
  /** False when a broker that was already running was reused. */
  readonly started: boolean;
  readonly pid: number | undefined;
  readonly stateDir: string;
}

/** The local broker's `transaction.max.timeout.ms` unless configured otherwise: 15 minutes. */
export const LOCAL_TRANSACTION_MAX_TIMEOUT_MS = 900_000;

const RECIPE_DIR = fileURLToPath(new URL('../../infra/kafka/', import.meta.url));
const BROKER_MAIN_CLASS = 'kafka.Kafka';
const STORAGE_TOOL_CLASS = 'kafka.tools.StorageTool';

interface ResolvedOptions {
  port: number;
  stateDir: string;
  cacheDir: string;
  transactionMaxTimeoutMs: number;
  startTimeoutMs: number;
  log: (line: string) => void;
}

function resolveOptions(options: LocalBrokerOptions): ResolvedOptions {
  const port = options.port ?? Number(process.env.SLUICE_KAFKA_PORT ?? 9092);
  if (!Number.isInteger(port) || port < 1 || port > 65534) {
    throw new Error(`Kafka port must be a whole number from 1 to 65534 (SLUICE_KAFKA_PORT), not ${port}`);
  }
  return {
    port,
    stateDir: options.stateDir ?? join(process.cwd(), '.sluice', 'kafka'),
    cacheDir: options.cacheDir ?? process.env.SLUICE_CACHE_DIR ?? join(homedir(), '.cache', 'sluice'),
    transactionMaxTimeoutMs: options.transactionMaxTimeoutMs ?? LOCAL_TRANSACTION_MAX_TIMEOUT_MS,
    startTimeoutMs: options.startTimeoutMs ?? 120_000,
    log: options.log ?? (() => undefined),
  };
}

function kafkaVersion(): string {
  const pom = readFileSync(join(RECIPE_DIR, 'pom.xml'), 'utf8');
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1];
  if (!version) throw new Error(`infra/kafka/pom.xml has no <kafka.version> property`);
  return version;
}

function run(command: string, args: string[], what: string): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) {
    throw new Error(`Could not run ${command} to ${what}: ${result.error.message}. Is it installed and on PATH?`);
  }
  if (result.status !== 0) {
    const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${command} failed to ${what} (exit ${result.status}):\n${output}`);
  }
}

/** Fetches the broker's jars with Maven unless the cache already holds them; returns the folder. */
export function ensureKafkaRuntime(options: LocalBrokerOptions = {}): string {
  const { cacheDir, log } = resolveOptions(options);
  const version = kafkaVersion();
  const libs = join(cacheDir, `kafka-${version}`, 'libs');
  const complete = join(libs, '.complete');
  if (existsSync(complete)) return libs;

  log(`Fetching Apache Kafka ${version} from Maven Central into ${libs}`);
  const staging = `${libs}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  run(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      join(RECIPE_DIR, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${staging}`,
      '-DincludeScope=runtime',
    ],
    `fetch Apache Kafka ${version}`,
  );
  writeFileSync(join(staging, '.complete'), `${version}\n`);
  rmSync(libs, { recursive: true, force: true });
  renameSync(staging, libs);
  return libs;
}

function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

function renderServerProperties(options: ResolvedOptions, dataDir: string): string {
  const values: Record<string, string> = {
    port: String(options.port),
    controllerPort: String(options.port + 1),
    dataDir,
    transactionMaxTimeoutMs: String(options.transactionMaxTimeoutMs),
  };
  return readFileSync(join(RECIPE_DIR, 'server.properties'), 'utf8').replace(/\$\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`infra/kafka/server.properties uses unknown placeholder \${${name}}`);
    return value;
  });
}

function pidFile(stateDir: string): string {
  return join(stateDir, 'broker.pid');
}

/** The pid in the state folder, if that process is alive and is a Kafka broker. */
function runningBrokerPid(stateDir: string): number | undefined {
  const file = pidFile(stateDir);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return commandLine.includes(BROKER_MAIN_CLASS) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when a Kafka broker answers a metadata request at `brokers` within the timeout. */
export async function brokerAnswers(brokers: readonly string[], timeoutMs = 2_000): Promise<boolean> {
  const admin = new KafkaAdmin({
    brokers,
    connectionTimeoutMs: timeoutMs,
    requestTimeoutMs: timeoutMs,
    retry: { retries: 0 },
  });
  try {
    await admin.describeCluster();
    return true;
  } catch {
    return false;
  } finally {
    await admin.close().catch(() => undefined);
  }
}

function logTail(file: string, lines = 40): string {
  if (!existsSync(file)) return '(no broker log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

async function waitUntilAnswering(brokers: string[], pid: number, options: ResolvedOptions, logFile: string) {
  const deadline = Date.now() + options.startTimeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) {
      throw new Error(`The Kafka broker (pid ${pid}) exited while starting. Its log ends:\n${logTail(logFile)}`);
    }
    if (await brokerAnswers(brokers)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `The Kafka broker (pid ${pid}) did not answer at ${brokers.join(',')} within ${options.startTimeoutMs} ms. ` +
      `Its log ends:\n${logTail(logFile)}`,
  );
}

/**
 * Starts the local broker, or reuses the one already running from the same state folder or
 * answering on the same port.
 */
export async function startLocalBroker(options: LocalBrokerOptions = {}): Promise<LocalBroker> {
  const resolved = resolveOptions(options);
  const { port, stateDir, log } = resolved;
  const brokers = [`127.0.0.1:${port}`];
  mkdirSync(stateDir, { recursive: true });
  const logFile = join(stateDir, 'server.log');

  const runningPid = runningBrokerPid(stateDir);
  if (runningPid !== undefined) {
    log(`Reusing the Kafka broker already running (pid ${runningPid}) at ${brokers[0]}`);
    await waitUntilAnswering(brokers, runningPid, resolved, logFile);
    return { brokers, started: false, pid: runningPid, stateDir };
  }
  if (await brokerAnswers(brokers)) {
    log(`A Kafka broker already answers at ${brokers[0]}; reusing it`);
    return { brokers, started: false, pid: undefined, stateDir };
  }

  const libs = ensureKafkaRuntime(options);
  const classpath = join(libs, '*');
  const dataDir = join(stateDir, 'data');
  if (options.fresh) rmSync(dataDir, { recursive: true, force: true });
  const configFile = join(stateDir, 'server.properties');
  writeFileSync(configFile, renderServerProperties(resolved, dataDir));

  if (!existsSync(join(dataDir, 'meta.properties'))) {
    log(`Formatting KRaft storage in ${dataDir}`);
    const clusterId = randomBytes(16).toString('base64url');
    run(
      javaCommand(),
      ['-cp', classpath, STORAGE_TOOL_CLASS, 'format', '--ignore-formatted', '-t', clusterId, '-c', configFile],
      'format the Kafka storage',
    );
  }

  log(`Starting Kafka on ${brokers[0]} (log: ${logFile})`);
  const out = openSync(logFile, 'a');
  const child = spawn(
    javaCommand(),
    [
      '-Xms256m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${join(RECIPE_DIR, 'log4j2.properties')}`,
      '-cp',
      classpath,
      BROKER_MAIN_CLASS,
      configFile,
    ],
    { detached: true, stdio: ['ignore', out, out] },
  );
  closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Could not start ${javaCommand()}: is a Java 17+ runtime installed?`);
  child.unref();
  writeFileSync(pidFile(stateDir), `${pid}\n`);
  await waitUntilAnswering(brokers, pid, resolved, logFile);
  log(`Kafka is up at ${brokers[0]} (pid ${pid})`);
  return { brokers, started: true, pid, stateDir };
}

/**
 * Stops the broker started from this state folder: SIGTERM for a controlled shutdown, then
 * SIGKILL if it has not exited within the grace period. Returns false when none was running.
 */
export async function stopLocalBroker(options: LocalBrokerOptions = {}, graceMs = 30_000): Promise<boolean> {
  const { stateDir, log } = resolveOptions(options);
  const pid = runningBrokerPid(stateDir);
  rmSync(pidFile(stateDir), { force: true });
  if (pid === undefined) return false;
  log(`Stopping the Kafka broker (pid ${pid})${graceMs === 0 ? ' with SIGKILL' : ''}`);
  // No grace: killed as a crashed machine would leave it, for fault tests.
  process.kill(pid, graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (isAlive(pid)) {
    if (graceMs > 0) log(`The broker did not stop within ${graceMs} ms; killing it`);
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * The brokers a command or a test run should use: `KAFKA_BROKERS` when set, else the local
 * broker, started if need be. `release` stops the local broker only if this call started it.
 */
export async function acquireBrokers(
  options: LocalBrokerOptions = {},
): Promise<{ brokers: string[]; release: () => Promise<void> }> {
  const configured = brokersFromEnvironment();
  if (configured) return { brokers: configured, release: () => Promise.resolve() };
  const broker = await startLocalBroker(options);
  return {
    brokers: broker.brokers,
    release: async () => {
      if (broker.started) await stopLocalBroker(options);
    },
  };
}
