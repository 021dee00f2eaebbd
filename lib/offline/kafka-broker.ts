import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KafkaAdmin } from '../kafka/admin.js';
import { brokersFromEnvironment } from '../kafka/connection.js';
import { securedBrokerConfig, securedPorts, type LocalBrokerSecurity, type SecuredBrokerConfig, type SecuredListeners } from './broker-security.js';
import { buildOnce, sluiceCacheDir } from './cache-folder.js';
import { javaCommand, runningPid, runTool, startJava, stopJava, waitUntilAnswering } from './java-service.js';

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
  /** The size at which `server.log` rolls over to `server.log.1`; two older files are kept. Default 10 MiB. */
  readonly logFileBytes?: number;
  /** Progress lines (fetching, formatting, starting); silent by default. */
  readonly log?: (line: string) => void;
  /**
   * Start from empty storage when a new broker has to be started (a running one is still
   * reused as it is). Test runs use it: a broker that reloads the topics of every earlier run
   * answers before it hosts all their partitions again.
   */
  readonly fresh?: boolean;
  /**
   * TLS and SASL listeners beside the plaintext one, on the next ports past the controller's
   * (see {@link securedPorts}). A broker started with them always starts from empty storage,
   * where its SCRAM users are created.
   */
  readonly security?: LocalBrokerSecurity;
  /**
   * `connections.max.idle.ms`: how long the broker keeps a silent connection open (a cluster's
   * default is 10 minutes). Tests that freeze a client set it low.
   */
  readonly connectionsMaxIdleMs?: number;
}

export interface LocalBroker {
  readonly brokers: string[];
  /** The TLS and SASL listeners, when the broker was asked for them. */
  readonly secured?: SecuredListeners;
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
const DEFAULT_LOG_FILE_BYTES = 10 * 1024 * 1024;

interface ResolvedOptions {
  port: number;
  connectionsMaxIdleMs: number | undefined;
  stateDir: string;
  cacheDir: string;
  transactionMaxTimeoutMs: number;
  startTimeoutMs: number;
  logFileBytes: number;
  log: (line: string) => void;
}

function resolveOptions(options: LocalBrokerOptions): ResolvedOptions {
  const port = options.port ?? Number(process.env.SLUICE_KAFKA_PORT ?? 9092);
  if (!Number.isInteger(port) || port < 1 || port > 65534) {
    throw new Error(`Kafka port must be a whole number from 1 to 65534 (SLUICE_KAFKA_PORT), not ${port}`);
  }
  return {
    port,
    connectionsMaxIdleMs: options.connectionsMaxIdleMs,
    stateDir: options.stateDir ?? join(process.cwd(), '.sluice', 'kafka'),
    cacheDir: options.cacheDir ?? sluiceCacheDir(),
    transactionMaxTimeoutMs: options.transactionMaxTimeoutMs ?? LOCAL_TRANSACTION_MAX_TIMEOUT_MS,
    startTimeoutMs: options.startTimeoutMs ?? 120_000,
    logFileBytes: options.logFileBytes ?? DEFAULT_LOG_FILE_BYTES,
    log: options.log ?? (() => undefined),
  };
}

function kafkaVersion(): string {
  const pom = readFileSync(join(RECIPE_DIR, 'pom.xml'), 'utf8');
  const version = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1];
  if (!version) throw new Error(`infra/kafka/pom.xml has no <kafka.version> property`);
  return version;
}

/** Fetches the broker's jars with Maven unless the cache already holds them; returns the folder. */
export function ensureKafkaRuntime(options: LocalBrokerOptions = {}): string {
  const { cacheDir, log } = resolveOptions(options);
  const version = kafkaVersion();
  const libs = join(cacheDir, `kafka-${version}`, 'libs');
  return buildOnce(libs, (staging) => {
    log(`Fetching Apache Kafka ${version} from Maven Central into ${libs}`);
    runTool(
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
  });
}

function renderServerProperties(options: ResolvedOptions, dataDir: string, secured: SecuredBrokerConfig | undefined): string {
  const values: Record<string, string> = {
    port: String(options.port),
    controllerPort: String(options.port + 1),
    dataDir,
    transactionMaxTimeoutMs: String(options.transactionMaxTimeoutMs),
    securedListeners: secured?.listenerSuffix ?? '',
    extraProperties: [
      ...(secured ? [secured.properties] : []),
      ...(options.connectionsMaxIdleMs === undefined ? [] : [`connections.max.idle.ms=${options.connectionsMaxIdleMs}`]),
    ].join('\n'),
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
  return runningPid(pidFile(stateDir), BROKER_MAIN_CLASS);
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

/**
 * The broker's log, and the JVM's own output: anything it prints before logging starts, such as a
 * failure to start.
 */
function brokerLogFiles(stateDir: string): { readonly log: string; readonly out: string } {
  return { log: join(stateDir, 'server.log'), out: join(stateDir, 'server.out') };
}

function waitUntilBrokerAnswers(brokers: string[], pid: number, options: ResolvedOptions): Promise<void> {
  const { out, log } = brokerLogFiles(options.stateDir);
  return waitUntilAnswering(() => brokerAnswers(brokers), {
    pid,
    timeoutMs: options.startTimeoutMs,
    name: 'Kafka broker',
    at: brokers.join(','),
    logFiles: [out, log],
  });
}

/**
 * A random cluster id in Kafka's form (16 bytes, URL-safe base64 without padding) that does
 * not start with '-': kafka-storage's argument parser reads such an id as an option and fails
 * to format, one draw in 64, as Kafka's own Uuid.randomUuid draws again to avoid.
 */
export function kafkaClusterId(draw: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = draw(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
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
  const logFiles = brokerLogFiles(stateDir);

  const runningPid = runningBrokerPid(stateDir);
  if (runningPid !== undefined) {
    log(`Reusing the Kafka broker already running (pid ${runningPid}) at ${brokers[0]}`);
    await waitUntilBrokerAnswers(brokers, runningPid, resolved);
    return { brokers, started: false, pid: runningPid, stateDir, ...runningSecuredListeners(options, stateDir) };
  }
  if (await brokerAnswers(brokers)) {
    log(`A Kafka broker already answers at ${brokers[0]}; reusing it`);
    return { brokers, started: false, pid: undefined, stateDir, ...runningSecuredListeners(options, stateDir) };
  }

  const libs = ensureKafkaRuntime(options);
  const dataDir = join(stateDir, 'data');
  rmSync(securedListenersFile(stateDir), { force: true });
  const secured = options.security
    ? securedBrokerConfig(options.security, { port, stateDir, cacheDir: resolved.cacheDir, kafkaLibs: libs })
    : undefined;
  const classpath = [join(libs, '*'), ...(secured?.classpath ?? [])].join(':');
  if (options.fresh || secured) rmSync(dataDir, { recursive: true, force: true });
  const configFile = join(stateDir, 'server.properties');
  writeFileSync(configFile, renderServerProperties(resolved, dataDir, secured));

  if (!existsSync(join(dataDir, 'meta.properties'))) {
    log(`Formatting KRaft storage in ${dataDir}`);
    const clusterId = kafkaClusterId();
    runTool(
      javaCommand(),
      ['-cp', classpath, STORAGE_TOOL_CLASS, 'format', '--ignore-formatted', '-t', clusterId, '-c', configFile, ...(secured?.formatArguments ?? [])],
      'format the Kafka storage',
    );
  }

  log(`Starting Kafka on ${brokers[0]} (log: ${logFiles.log})`);
  const pid = startJava(
    [
      '-Xms256m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${join(RECIPE_DIR, 'log4j2.properties')}`,
      `-Dsluice.log.dir=${stateDir}`,
      `-Dsluice.log.maxBytes=${resolved.logFileBytes}`,
      '-cp',
      classpath,
      BROKER_MAIN_CLASS,
      configFile,
    ],
    logFiles.out,
    pidFile(stateDir),
  );
  await waitUntilBrokerAnswers(brokers, pid, resolved);
  log(`Kafka is up at ${brokers[0]} (pid ${pid})`);
  if (secured) writeFileSync(securedListenersFile(stateDir), JSON.stringify(secured.listeners));
  return { brokers, started: true, pid, stateDir, ...(secured ? { secured: secured.listeners } : {}) };
}

function securedListenersFile(stateDir: string): string {
  return join(stateDir, 'secured-listeners.json');
}

/** The secured listeners of a running broker that was started with them; a reused broker without them cannot give them. */
function runningSecuredListeners(options: LocalBrokerOptions, stateDir: string): { secured?: SecuredListeners } {
  if (!options.security) return {};
  const file = securedListenersFile(stateDir);
  if (!existsSync(file)) {
    throw new Error(
      `The Kafka broker already running from ${stateDir} has no TLS or SASL listeners (ports ${Object.values(securedPorts(resolveOptions(options).port)).join(', ')}): stop it (npm run kafka:stop) and start it again with them`,
    );
  }
  return { secured: JSON.parse(readFileSync(file, 'utf8')) as SecuredListeners };
}

/**
 * Stops the broker started from this state folder: SIGTERM for a controlled shutdown, then
 * SIGKILL if it has not exited within the grace period. Returns false when none was running.
 */
export async function stopLocalBroker(options: LocalBrokerOptions = {}, graceMs = 30_000): Promise<boolean> {
  const { stateDir, log } = resolveOptions(options);
  return stopJava(pidFile(stateDir), BROKER_MAIN_CLASS, { graceMs, name: 'Kafka broker', log });
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
