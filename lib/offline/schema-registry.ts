import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOnce, sluiceCacheDir } from './cache-folder.js';
import { runningPid, runTool, startJava, stopJava, waitUntilAnswering } from './java-service.js';

/**
 * Launches a local schema registry on 127.0.0.1 for tests and offline mode: Apicurio Registry,
 * which serves the Confluent-compatible API, built once from Maven Central through
 * infra/schema-registry/pom.xml and cached. It keeps its schemas in an H2 database in the state
 * folder, each registration written when it is acknowledged: the records in the topics name
 * schemas by id, so the ids must outlive a restart, even a kill.
 */
export interface LocalSchemaRegistryOptions {
  /** HTTP port. Default 8081 (the Confluent registry's) or `SLUICE_SCHEMA_REGISTRY_PORT`. */
  readonly port?: number;
  /** Where the registry's schemas, log and process id go. Default `.sluice/schema-registry` in the working folder. */
  readonly stateDir?: string;
  /** Where the built registry is cached. Default `~/.cache/sluice` or `SLUICE_CACHE_DIR`. */
  readonly cacheDir?: string;
  /** How long to wait for the registry to answer after starting it. */
  readonly startTimeoutMs?: number;
  /** Progress lines (building, starting); silent by default. */
  readonly log?: (line: string) => void;
}

export interface LocalSchemaRegistry {
  /** The Confluent-compatible API's base URL, for registry clients and serialization schemas. */
  readonly url: string;
  /** False when a registry that was already running was reused. */
  readonly started: boolean;
  readonly pid: number | undefined;
}

const RECIPE_DIR = fileURLToPath(new URL('../../infra/schema-registry/', import.meta.url));
const RECIPE_FILES = ['pom.xml', 'src/main/java/dev/sluice/registry/DynamicConfigPropertiesProducer.java'];
const ARTIFACT = 'sluice-local-schema-registry';
/** Apicurio's Confluent-compatible API, version 7 of Confluent's paths. */
const CONFLUENT_API_PATH = '/apis/ccompat/v7';

function resolveOptions(options: LocalSchemaRegistryOptions) {
  const port = options.port ?? Number(process.env.SLUICE_SCHEMA_REGISTRY_PORT ?? 8081);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`The schema registry's port must be a whole number from 1 to 65535 (SLUICE_SCHEMA_REGISTRY_PORT), not ${port}`);
  }
  const stateDir = options.stateDir ?? join(process.cwd(), '.sluice', 'schema-registry');
  return {
    port,
    stateDir,
    pidFile: join(stateDir, 'registry.pid'),
    logFile: join(stateDir, 'registry.log'),
    cacheDir: options.cacheDir ?? sluiceCacheDir(),
    startTimeoutMs: options.startTimeoutMs ?? 120_000,
    log: options.log ?? (() => undefined),
  };
}

function recipeVersion(): string {
  const pom = readFileSync(join(RECIPE_DIR, 'pom.xml'), 'utf8');
  const version = /<apicurio\.version>([^<]+)<\/apicurio\.version>/.exec(pom)?.[1];
  if (!version) throw new Error('infra/schema-registry/pom.xml has no <apicurio.version> property');
  const hash = createHash('sha256');
  for (const file of RECIPE_FILES) hash.update(readFileSync(join(RECIPE_DIR, file)));
  return `${version}-${hash.digest('hex').slice(0, 8)}`;
}

/** Builds the registry with Maven unless the cache already holds this recipe's build; returns its runner jar. */
export function ensureSchemaRegistryRuntime(options: LocalSchemaRegistryOptions = {}): string {
  const { cacheDir, log } = resolveOptions(options);
  const version = recipeVersion();
  const home = join(cacheDir, `schema-registry-${version}`);
  const runner = join(home, `${ARTIFACT}-0-runner.jar`);
  buildOnce(home, (staging) => {
    log(`Building Apicurio Registry ${version} from Maven Central into ${home}`);
    runTool(
      'mvn',
      ['-q', '-B', '-f', join(RECIPE_DIR, 'pom.xml'), 'package', '-DskipTests', `-Dregistry.buildDirectory=${staging}`],
      `build Apicurio Registry ${version}`,
    );
  });
  return runner;
}

/** True when a Confluent-compatible registry answers at `url` within the timeout. */
export async function schemaRegistryAnswers(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await fetch(`${url}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok;
  } catch {
    return false;
  }
}

/** Starts the local registry, or reuses the one already running from the same state folder or answering on the same port. */
export async function startLocalSchemaRegistry(options: LocalSchemaRegistryOptions = {}): Promise<LocalSchemaRegistry> {
  const { port, stateDir, pidFile, logFile, startTimeoutMs, log } = resolveOptions(options);
  const url = `http://127.0.0.1:${port}${CONFLUENT_API_PATH}`;
  mkdirSync(stateDir, { recursive: true });
  const wait = (pid: number) =>
    waitUntilAnswering(() => schemaRegistryAnswers(url), { pid, timeoutMs: startTimeoutMs, name: 'schema registry', at: url, logFiles: [logFile] });

  const running = runningPid(pidFile, ARTIFACT);
  if (running !== undefined) {
    log(`Reusing the schema registry already running (pid ${running}) at ${url}`);
    await wait(running);
    return { url, started: false, pid: running };
  }
  if (await schemaRegistryAnswers(url)) {
    log(`A schema registry already answers at ${url}; reusing it`);
    return { url, started: false, pid: undefined };
  }

  const runner = ensureSchemaRegistryRuntime(options);
  log(`Starting Apicurio Registry on ${url} (log: ${logFile})`);
  // WRITE_DELAY=0: H2 writes each commit before it answers, so a killed registry keeps every id it gave.
  const database = `jdbc:h2:file:${join(stateDir, 'data', 'registry')};WRITE_DELAY=0`;
  const pid = startJava(
    ['-Xmx384m', `-Dquarkus.http.port=${port}`, '-Dquarkus.http.host=127.0.0.1', `-Dquarkus.datasource.jdbc.url=${database}`, '-jar', runner],
    logFile,
    pidFile,
  );
  await wait(pid);
  log(`The schema registry is up at ${url} (pid ${pid})`);
  return { url, started: true, pid };
}

/** Stops the registry started from this state folder. Returns false when none was running. */
export function stopLocalSchemaRegistry(options: LocalSchemaRegistryOptions = {}, graceMs = 30_000): Promise<boolean> {
  const { pidFile, log } = resolveOptions(options);
  return stopJava(pidFile, ARTIFACT, { graceMs, name: 'schema registry', log });
}

/**
 * The registry a command or a test run should use: `SCHEMA_REGISTRY_URL` when set, else the
 * local registry, started if need be. `release` stops the local registry only if this call started it.
 */
export async function acquireSchemaRegistry(
  options: LocalSchemaRegistryOptions = {},
): Promise<{ url: string; release: () => Promise<void> }> {
  const configured = process.env.SCHEMA_REGISTRY_URL;
  if (configured) return { url: configured, release: () => Promise.resolve() };
  const registry = await startLocalSchemaRegistry(options);
  return {
    url: registry.url,
    release: async () => {
      if (registry.started) await stopLocalSchemaRegistry(options);
    },
  };
}
