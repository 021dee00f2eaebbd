import confluentSchemaRegistry from '@kafkajs/confluent-schema-registry';
// The library's own codecs for a schema's text, so that a Glue schema reads and validates as a Confluent one does.
import { schemaFromConfluentSchema } from '@kafkajs/confluent-schema-registry/dist/schemaTypeResolver.js';
import type { PayloadCodec, RegisteredSchema, SchemaFormat, SchemaSource, SchemaTarget } from './schema-source.js';
import { readWireFormat, schemaIdsOf, writeWireFormat, type WireRecord } from './wire-format.js';

const { SchemaRegistry, SchemaType } = confluentSchemaRegistry;
type SchemaRegistryClient = InstanceType<typeof SchemaRegistry>;

/** The codec of a schema given as text (an Avro schema's JSON, a JSON Schema, a `.proto`). */
export function codecFor(format: SchemaFormat, schema: string): PayloadCodec {
  return schemaFromConfluentSchema({ type: SchemaType[format], schema });
}

/** How to reach a Confluent-compatible schema registry (Confluent's, Apicurio's `/apis/ccompat/v7`, Karapace, Redpanda). */
export interface SchemaRegistryOptions {
  /** The API's base URL: `https://registry:8081`, or Apicurio's `http://host:8080/apis/ccompat/v7`. */
  readonly url: string;
  /** HTTP basic credentials (Confluent Cloud's API key and secret). */
  readonly username?: string;
  readonly password?: string;
  /**
   * HTTP basic credentials fetched once, before the first request: from a secret, say
   * (`schemaRegistryFromEnvironment` in lib/aws reads them from Secrets Manager).
   */
  readonly credentials?: () => Promise<RegistryCredentials>;
  /** Retries of a lookup that failed for want of an answer (unreachable, 5xx) before the batch fails. Default 3. */
  readonly retries?: number;
}

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** The registry could not be asked (unreachable, refused the credentials, failed): the batch fails, and is retried. */
export class SchemaRegistryUnavailableError extends Error {
  override readonly name = 'SchemaRegistryUnavailableError';
}

/** A schema id the registry does not know: the record that carries it is a bad record. */
export class UnknownSchemaError extends Error {
  override readonly name = 'UnknownSchemaError';
}

interface ResponseError {
  readonly status?: number;
  readonly message: string;
}

/** The wait before retry `attempt + 1` of a registration: 100 ms, doubling. */
function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
}

/** One registry client per registry and credentials in a container, so each schema id is looked up once. */
const clients = new Map<string, RegistryClient>();
/** Credential providers by identity, for the clients' keys. */
const providers = new WeakMap<object, number>();
let providerCount = 0;

/** Resolves a registry setting given as a URL or as options. */
export function registryOptions(registry: string | SchemaRegistryOptions): SchemaRegistryOptions {
  const options = typeof registry === 'string' ? { url: registry } : registry;
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new Error(`The schema registry URL ${JSON.stringify(options.url)} is not a URL: give one such as http://127.0.0.1:8081`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`The schema registry URL ${options.url} must start with http:// or https://`);
  }
  return { ...options, url: options.url.replace(/\/+$/, '') };
}

export function registryClient(registry: string | SchemaRegistryOptions): RegistryClient {
  const options = registryOptions(registry);
  const { credentials } = options;
  if (credentials && !providers.has(credentials)) providers.set(credentials, ++providerCount);
  const cacheKey = `${options.url}\u0000${options.username ?? ''}\u0000${options.password ?? ''}\u0000${credentials ? providers.get(credentials) : ''}`;
  let client = clients.get(cacheKey);
  if (!client) {
    client = new RegistryClient(options);
    clients.set(cacheKey, client);
  }
  return client;
}

/**
 * The container's view of one registry: schemas by id, looked up once each (a lookup that
 * finds no schema is remembered too), and subjects' ids for the sinks.
 */
export class RegistryClient implements SchemaSource<number>, SchemaTarget<number> {
  readonly nameKind = 'subject';
  private connected: { client: SchemaRegistryClient; credentials: RegistryCredentials | undefined } | undefined;
  private connecting: Promise<{ client: SchemaRegistryClient; credentials: RegistryCredentials | undefined }> | undefined;
  private readonly unknown = new Map<number, UnknownSchemaError>();

  constructor(readonly options: SchemaRegistryOptions) {}

  /** The client library's client, made once its credentials are known. */
  private connect() {
    this.connecting ??= (async () => {
      const { url, username, password, credentials: provider, retries = 3 } = this.options;
      let credentials: RegistryCredentials | undefined = username === undefined ? undefined : { username, password: password ?? '' };
      if (provider) {
        try {
          credentials = await provider();
        } catch (error) {
          this.connecting = undefined;
          throw this.unavailable('read the credentials', error, 'check the secret the credentials come from, and that the function may read it');
        }
      }
      const client = new SchemaRegistry({
        host: url,
        ...(credentials ? { auth: { username: credentials.username, password: credentials.password } } : {}),
        retry: { retries, initialRetryTimeInSecs: 0.1, maxRetryTimeInSecs: 2 },
      });
      this.connected = { client, credentials };
      return this.connected;
    })();
    return this.connecting;
  }

  schemaIdsOf(values: readonly (Buffer | null)[]): Set<number> {
    return schemaIdsOf(values);
  }

  unframe(value: Buffer | null): WireRecord {
    return readWireFormat(value);
  }

  frame(id: number, payload: Buffer): Buffer {
    return writeWireFormat(id, payload);
  }

  idOf(subject: string, format: SchemaFormat, schema: string, register: boolean): Promise<number> {
    return register ? this.register(subject, format, schema) : this.registeredId(subject, format, schema);
  }

  /** Looks up the ids not yet known, together. */
  async prefetch(ids: ReadonlySet<number>): Promise<void> {
    const missing = [...ids].filter((id) => this.connected?.client.cache.getSchema(id) === undefined && !this.unknown.has(id));
    if (missing.length === 0) return;
    const { client } = await this.connect();
    await Promise.all(
      missing.map(async (id) => {
        try {
          await client.getSchema(id);
        } catch (error) {
          if ((error as ResponseError).status !== 404) throw this.unavailable(`look up schema id ${id}`, error);
          this.unknown.set(
            id,
            new UnknownSchemaError(
              `schema id ${id} is not in the registry at ${this.options.url} (${(error as ResponseError).message}): ` +
                'the record was written against another registry, or its schema was deleted',
            ),
          );
        }
      }),
    );
  }

  /** A schema {@link prefetch} looked up; throws {@link UnknownSchemaError} for an id the registry does not hold. */
  schema(id: number): RegisteredSchema {
    const entry = this.connected?.client.cache.getSchema(id);
    if (entry) return { format: entry.type as SchemaFormat, codec: entry.schema };
    const unknown = this.unknown.get(id);
    if (unknown) throw unknown;
    throw new Error(
      `schema id ${id} was not looked up before its record was read: the deserializer's prepare was not called (in a PipelineTestHarness, send with sendAsync)`,
    );
  }

  /**
   * Registers `schema` under `subject` (or finds it there, registered before); returns its id.
   * The registry applies the subject's compatibility rule; Sluice neither sets nor demands one
   * (the client library's `register` insists on its own, so this request is made here).
   */
  private async register(subject: string, format: SchemaFormat, schema: string): Promise<number> {
    const what = `register the schema under subject "${subject}"`;
    const { url, retries = 3 } = this.options;
    const { client, credentials } = await this.connect();
    const headers: Record<string, string> = { 'Content-Type': 'application/vnd.schemaregistry.v1+json' };
    if (credentials) headers.Authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const body = JSON.stringify({ ...(format === 'AVRO' ? {} : { schemaType: format }), schema });
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, { method: 'POST', headers, body });
      } catch (error) {
        if (attempt < retries) {
          await backOff(attempt);
          continue;
        }
        throw this.unavailable(what, error);
      }
      const answer = (await response.json().catch(() => ({}))) as { id?: number; message?: string };
      if (response.ok && typeof answer.id === 'number') {
        await client.getSchema(answer.id).catch((error: unknown) => {
          throw this.unavailable(`look up schema id ${answer.id}`, error);
        });
        return answer.id;
      }
      const reason = `${response.status} ${answer.message ?? response.statusText}`;
      // A 409 also answers two first registrations under one subject at once; the retry finds the subject made.
      if ((response.status === 409 || response.status >= 500) && attempt < retries) {
        await backOff(attempt);
        continue;
      }
      if (response.status === 409) {
        throw new Error(
          `The registry at ${url} rejects the sink's schema under subject "${subject}" as incompatible with the versions it holds (${reason}): ` +
            "evolve the schema by the subject's compatibility rule (a new field needs a default), or register it under another subject",
        );
      }
      if (response.status === 422) throw new Error(`The registry at ${url} rejects the sink's schema for subject "${subject}" as invalid (${reason})`);
      throw this.unavailable(what, Object.assign(new Error(reason), { status: response.status }));
    }
  }

  /** The id `schema` already has under `subject`, for a sink that may not register. */
  private async registeredId(subject: string, format: SchemaFormat, schema: string): Promise<number> {
    const { client } = await this.connect();
    try {
      const id = await client.getRegistryIdBySchema(subject, { type: SchemaType[format], schema });
      await client.getSchema(id);
      return id;
    } catch (error) {
      // The client library turns the registry's 404 (no such subject, or not this schema in it) into its base error.
      if ((error as Error).name === 'ConfluentSchemaRegistryError') {
        throw new Error(
          `Subject "${subject}" of the registry at ${this.options.url} does not hold the sink's schema: register it, ` +
            'or let the serialization schema register it (autoRegister: true)',
          { cause: error },
        );
      }
      throw this.unavailable(`look up the schema of subject "${subject}"`, error);
    }
  }

  private unavailable(what: string, error: unknown, knownFix?: string): SchemaRegistryUnavailableError {
    const status = (error as ResponseError).status;
    const reason = error instanceof Error ? error.message : String(error);
    const fix =
      knownFix ??
      (status === 401 || status === 403
        ? 'check the registry credentials (username and password, or the secret they come from)'
        : 'check the registry URL and that the function can reach it; the batch fails and is retried, and no record is skipped');
    return new SchemaRegistryUnavailableError(`Could not ${what} at the schema registry ${this.options.url}: ${reason}. ${fix}`, {
      cause: error,
    });
  }
}
