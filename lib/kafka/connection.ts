import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type InstrumentationEvent, type logCreator } from 'kafkajs';
import Cluster from 'kafkajs/src/cluster/index.js';
import InstrumentationEventEmitter from 'kafkajs/src/instrumentation/emitter.js';
import { createLogger } from 'kafkajs/src/loggers/index.js';
import defaultSocketFactory from 'kafkajs/src/network/socketFactory.js';
import { authenticationFailure, kafkajsSecurity, verifyBrokerCertificate, type KafkaAuthentication } from './authentication.js';
import { BROKERS_ENVIRONMENT_VARIABLE, parseBrokerList } from './broker-list.js';

export { BROKERS_ENVIRONMENT_VARIABLE, parseBrokerList };

/** How Sluice reaches a Kafka cluster. */
export interface KafkaConnectionOptions {
  /** `host:port` of one or more brokers. */
  readonly brokers: readonly string[];
  /** Sent to the broker with every request; shows up in its logs and quotas. */
  readonly clientId?: string;
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  readonly retry?: KafkaRetryOptions;
  /** TLS and SASL; plaintext without it (local brokers). */
  readonly authentication?: KafkaAuthentication;
  /** Called with each request to a broker as its response arrives: for metrics and for modelling a batch's round trips. */
  readonly onRequest?: (request: KafkaRequestSpan) => void;
}

/** How requests that failed with a retriable error are retried: exponential backoff with jitter. */
export interface KafkaRetryOptions {
  /** Retries after the first try; 0 fails at the first retriable error. */
  readonly retries?: number;
  readonly initialRetryTime?: number;
  readonly maxRetryTime?: number;
  readonly factor?: number;
  readonly multiplier?: number;
}

/**
 * One request to a broker, from its send to its response, on `performance.now()`'s clock.
 * kafkajs times requests in whole milliseconds, so `start` is as coarse; `end` is exact.
 */
export interface KafkaRequestSpan {
  /** The protocol's name for it: `Produce`, `InitProducerId`, `Fetch`, ... */
  readonly api: string;
  readonly start: number;
  readonly end: number;
}

type RequestEvent = InstrumentationEvent<{ apiName: string; duration: number }>;

function spanOf({ payload }: RequestEvent): KafkaRequestSpan {
  const end = performance.now();
  return { api: payload.apiName, start: end - payload.duration, end };
}

/** A listener for a kafkajs producer's or admin's request events that passes each to `onRequest`. */
export function requestListener(onRequest: NonNullable<KafkaConnectionOptions['onRequest']>): (event: RequestEvent) => void {
  return (event) => onRequest(spanOf(event));
}

/** The brokers named by `KAFKA_BROKERS`, or undefined when it is not set. */
export function brokersFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const value = env[BROKERS_ENVIRONMENT_VARIABLE];
  return value === undefined || value.trim() === ''
    ? undefined
    : parseBrokerList(value, BROKERS_ENVIRONMENT_VARIABLE);
}

const DEFAULT_CLIENT_ID = 'sluice';
const DEFAULT_CONNECTION_TIMEOUT_MS = 3_000;

const AUTH_MODES = ['NONE', 'TLS', 'IAM', 'SCRAM'] as const;

/** SASL/SCRAM credentials, as the secret of an MSK cluster (or of a self-managed one) holds them. */
export interface ScramCredentials {
  readonly username: string;
  readonly password: string;
}

/** Whether the environment asks for SASL/SCRAM (`KAFKA_AUTH=SCRAM`). */
export function usesScram(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.KAFKA_AUTH ?? '').toUpperCase() === 'SCRAM';
}

/** The certificate authority `KAFKA_TLS_CA_FILE` names (a PEM file, bundled with the functions), if any. */
function certificateAuthorityFromEnvironment(env: NodeJS.ProcessEnv, mode: string): { ca?: string } {
  const file = env.KAFKA_TLS_CA_FILE;
  if (file === undefined || file === '') return {};
  if (mode === 'NONE') throw new Error('KAFKA_TLS_CA_FILE is set but KAFKA_AUTH is NONE (plaintext): set KAFKA_AUTH to TLS, IAM or SCRAM, or unset KAFKA_TLS_CA_FILE');
  let ca: string;
  try {
    ca = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`KAFKA_TLS_CA_FILE names ${file}, which cannot be read (${(error as Error).message}): bundle the PEM file with the functions`, { cause: error });
  }
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`KAFKA_TLS_CA_FILE names ${file}, which holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return { ca };
}

/**
 * How the functions reach their cluster, from the environment: `KAFKA_BROKERS`, and
 * `KAFKA_AUTH` — `IAM` (MSK IAM: TLS and SASL/OAUTHBEARER tokens signed with the function's
 * role, `AWS_REGION`), `SCRAM` (TLS and SASL/SCRAM-SHA-512 with `scram`, which the deployed
 * functions read from the Secrets Manager secret `KAFKA_SASL_SECRET_ARN`; outside AWS,
 * `KAFKA_SASL_USERNAME` and `KAFKA_SASL_PASSWORD` may give them instead), `TLS`, or `NONE`
 * (the default: plaintext, for local brokers). `KAFKA_TLS_CA_FILE` names a PEM file of the
 * certificate authority to trust instead of Node's bundled ones, for a cluster with its own CA.
 */
export function kafkaFromEnvironment(env: NodeJS.ProcessEnv = process.env, scram?: ScramCredentials): KafkaConnectionOptions | undefined {
  const brokers = brokersFromEnvironment(env);
  if (!brokers) return undefined;
  const mode = (env.KAFKA_AUTH ?? 'NONE').toUpperCase();
  if (!(AUTH_MODES as readonly string[]).includes(mode)) {
    throw new Error(`KAFKA_AUTH is "${env.KAFKA_AUTH ?? ''}": use one of ${AUTH_MODES.join(', ')}`);
  }
  const ca = certificateAuthorityFromEnvironment(env, mode);
  let authentication: KafkaAuthentication | undefined;
  if (mode === 'TLS') authentication = { kind: 'tls', ...ca };
  if (mode === 'IAM') {
    const region = env.AWS_REGION;
    if (!region) throw new Error('KAFKA_AUTH=IAM needs AWS_REGION: the region of the MSK cluster');
    authentication = { kind: 'msk-iam', region, ...ca };
  }
  if (mode === 'SCRAM') {
    const username = scram?.username ?? env.KAFKA_SASL_USERNAME;
    const password = scram?.password ?? env.KAFKA_SASL_PASSWORD;
    if (!username || !password) {
      throw new Error(
        'KAFKA_AUTH=SCRAM needs KAFKA_SASL_SECRET_ARN: a Secrets Manager secret holding {"username": ..., "password": ...}, ' +
          'as Amazon MSK keeps SCRAM credentials (outside AWS, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD do too)',
      );
    }
    authentication = { kind: 'scram-sha-512', username, password, ...ca };
  }
  return { brokers, ...(authentication ? { authentication } : {}) };
}

const LOG_LEVELS: Record<string, logLevel> = {
  NOTHING: logLevel.NOTHING,
  ERROR: logLevel.ERROR,
  WARN: logLevel.WARN,
  INFO: logLevel.INFO,
  DEBUG: logLevel.DEBUG,
};

// kafkajs logs connection retries at ERROR level even when a retry then succeeds; Sluice
// reports failures itself, so the client's own log stays at WARN unless asked otherwise.
function clientLogLevel(): logLevel {
  return LOG_LEVELS[(process.env.SLUICE_KAFKA_LOG_LEVEL ?? '').toUpperCase()] ?? logLevel.NOTHING;
}

const jsonLogCreator: logCreator =
  () =>
  ({ namespace, label, log }) => {
    const { message, ...extra } = log;
    process.stderr.write(`${JSON.stringify({ level: label, logger: `kafkajs.${namespace}`, message, ...extra })}\n`);
  };

function clientConfig(options: KafkaConnectionOptions) {
  return {
    ...kafkajsSecurity(options.authentication),
    brokers: [...options.brokers],
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    connectionTimeout: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    ...(options.retry ? { retry: { ...options.retry } } : {}),
  };
}

/**
 * Runs `connect` (a kafkajs client's), first checking the brokers' certificate, and turns a
 * refusal that no retry mends (an untrusted certificate, wrong credentials) into a
 * {@link KafkaAuthenticationError} that says what to fix.
 */
export async function connectVerified(options: KafkaConnectionOptions, connect: () => Promise<void>): Promise<void> {
  await verifyBrokerCertificate(options.brokers, options.authentication, options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS);
  try {
    await connect();
  } catch (error) {
    throw authenticationFailure(error, options.brokers, options.authentication) ?? error;
  }
}

/** A kafkajs client for the public producer, consumer and admin APIs. */
export function createKafkaClient(options: KafkaConnectionOptions): Kafka {
  return new Kafka({ ...clientConfig(options), logLevel: clientLogLevel(), logCreator: jsonLogCreator });
}

function requestEmitter(onRequest: NonNullable<KafkaConnectionOptions['onRequest']>): InstrumentationEventEmitter {
  const emitter = new InstrumentationEventEmitter();
  emitter.addListener('network.request', requestListener(onRequest));
  return emitter;
}

/**
 * kafkajs's internal cluster, connected on first use: broker-level requests (InitProducerId,
 * Produce with explicit sequence numbers, EndTxn, Fetch) that its public API does not expose.
 */
export class ClusterConnection {
  private readonly cluster: Cluster;
  private connected: Promise<void> | undefined;

  constructor(private readonly options: KafkaConnectionOptions) {
    this.cluster = new Cluster({
      ...clientConfig(options),
      logger: createLogger({ level: clientLogLevel(), logCreator: jsonLogCreator }),
      socketFactory: defaultSocketFactory(),
      enforceRequestTimeout: true,
      metadataMaxAge: 300_000,
      allowAutoTopicCreation: false,
      ...(options.onRequest ? { instrumentationEmitter: requestEmitter(options.onRequest) } : {}),
    });
  }

  async ready(): Promise<Cluster> {
    this.connected ??= this.connect().catch((error: unknown) => {
      this.connected = undefined;
      throw error;
    });
    await this.connected;
    return this.cluster;
  }

  private async connect(): Promise<void> {
    await connectVerified(this.options, () => this.cluster.connect());
    // kafkajs's connect reaches only a seed broker; without the cluster's metadata, the first
    // request to a coordinator or leader would wait out a ~300 ms retry while it loads.
    await this.cluster.refreshMetadata();
  }

  async close(): Promise<void> {
    if (this.connected) {
      this.connected = undefined;
      await this.cluster.disconnect();
    }
  }
}
