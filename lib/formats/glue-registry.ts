import type { GlueClient, GlueClientConfig } from '@aws-sdk/client-glue';
import { glueSchemaIdsOf, readGlueWireFormat, writeGlueWireFormat, type GlueCompression, type GlueWireRecord } from './glue-wire-format.js';
import { codecFor, SchemaRegistryUnavailableError, UnknownSchemaError } from './registry.js';
import type { RegisteredSchema, SchemaFormat, SchemaSource, SchemaTarget } from './schema-source.js';

/** The compatibility rules Glue applies within a schema. */
export type GlueCompatibility = 'NONE' | 'DISABLED' | 'BACKWARD' | 'BACKWARD_ALL' | 'FORWARD' | 'FORWARD_ALL' | 'FULL' | 'FULL_ALL';

/** Where an AWS Glue Schema Registry is, and how sinks write to it. */
export interface GlueSchemaRegistryOptions {
  /**
   * The registry a sink registers its schema in. Default `default-registry`, as AWS's
   * serializers. A reader finds each schema version by its id, in any registry of the account.
   */
  readonly registryName?: string;
  /** The registry's region. Default the SDK's: `AWS_REGION`, which Lambda sets. */
  readonly region?: string;
  /** Another endpoint: a VPC endpoint, or an emulator. The SDK also reads `AWS_ENDPOINT_URL_GLUE`. */
  readonly endpoint?: string;
  /** Default the SDK's chain: a function's role. */
  readonly credentials?: GlueClientConfig['credentials'];
  /** How a sink compresses its payloads: `NONE` (the default, as AWS's serializers) or `ZLIB`. A reader reads both. */
  readonly compression?: GlueCompression;
  /** The rule of a schema a sink creates because the registry has none of its name. Default `BACKWARD`, as AWS's serializers. */
  readonly compatibility?: GlueCompatibility;
  /** Attempts of a request that failed for want of an answer (throttled, 5xx, unreachable). Default 3, the SDK's. */
  readonly maxAttempts?: number;
}

const DEFAULT_REGISTRY = 'default-registry';
const FORMATS = new Set<string>(['AVRO', 'JSON', 'PROTOBUF']);
/** How long a sink waits for a version Glue is still checking (status PENDING) before it fails to open. */
const PENDING_LIMIT_MS = 30_000;

type GlueModule = typeof import('@aws-sdk/client-glue');

/** One client per registry setting in a container, so each schema version is looked up once. */
const clients = new Map<string, GlueRegistryClient>();

export function glueRegistryClient(options: GlueSchemaRegistryOptions = {}): GlueRegistryClient {
  const registryName = options.registryName ?? DEFAULT_REGISTRY;
  if (registryName.trim() === '') throw new Error('The Glue schema registry needs a registryName, such as "orders-registry" (or leave it out for default-registry)');
  // Clients with credentials of their own are not shared: the credentials have no name to key them by.
  if (options.credentials) return new GlueRegistryClient({ ...options, registryName });
  const key = JSON.stringify([registryName, options.region, options.endpoint, options.compression, options.compatibility, options.maxAttempts]);
  let client = clients.get(key);
  if (!client) {
    client = new GlueRegistryClient({ ...options, registryName });
    clients.set(key, client);
  }
  return client;
}

function errorName(error: unknown): string | undefined {
  return (error as { name?: string } | undefined)?.name;
}

/**
 * The container's view of one AWS Glue Schema Registry: schema versions by id, each looked up
 * once (one that does not exist is remembered too), and sinks' schemas found or registered by
 * name, as AWS's serializers do.
 */
export class GlueRegistryClient implements SchemaSource<string>, SchemaTarget<string> {
  readonly nameKind = 'Glue schema';
  private connecting: Promise<{ glue: GlueClient; sdk: GlueModule }> | undefined;
  private readonly versions = new Map<string, RegisteredSchema | UnknownSchemaError>();

  constructor(readonly options: GlueSchemaRegistryOptions & { readonly registryName: string }) {}

  private connect() {
    // Loaded here, not with the module: `sluice` loads no AWS SDK, and only Glue formats need this one.
    this.connecting ??= import('@aws-sdk/client-glue').then((sdk) => {
      const { region, endpoint, credentials, maxAttempts } = this.options;
      const glue = new sdk.GlueClient({
        ...(region ? { region } : {}),
        ...(endpoint ? { endpoint } : {}),
        ...(credentials ? { credentials } : {}),
        ...(maxAttempts ? { maxAttempts } : {}),
      });
      return { glue, sdk };
    });
    return this.connecting;
  }

  schemaIdsOf(values: readonly (Buffer | null)[]): Set<string> {
    return glueSchemaIdsOf(values);
  }

  unframe(value: Buffer | null): GlueWireRecord {
    return readGlueWireFormat(value);
  }

  frame(id: string, payload: Buffer): Buffer {
    return writeGlueWireFormat(id, payload, this.options.compression);
  }

  async prefetch(ids: ReadonlySet<string>): Promise<void> {
    const missing = [...ids].filter((id) => !this.versions.has(id));
    if (missing.length === 0) return;
    const { glue, sdk } = await this.connect();
    await Promise.all(
      missing.map(async (id) => {
        try {
          const version = await glue.send(new sdk.GetSchemaVersionCommand({ SchemaVersionId: id }));
          this.versions.set(id, this.versionOf(id, version.DataFormat, version.SchemaDefinition, version.Status));
        } catch (error) {
          if (errorName(error) !== 'EntityNotFoundException') throw this.unavailable(`look up schema version ${id}`, error, 'glue:GetSchemaVersion');
          this.versions.set(
            id,
            new UnknownSchemaError(
              `schema version ${id} is not in the AWS Glue Schema Registry (${(error as Error).message}): ` +
                'the record was written against another account or region, or its schema version was deleted',
            ),
          );
        }
      }),
    );
  }

  private versionOf(id: string, format: string | undefined, definition: string | undefined, status: string | undefined): RegisteredSchema | UnknownSchemaError {
    if (status !== 'AVAILABLE') return new UnknownSchemaError(`schema version ${id} is ${status ?? 'of no status'} in the AWS Glue Schema Registry, not AVAILABLE: no serializer writes with it`);
    if (format === undefined || !FORMATS.has(format) || definition === undefined) {
      return new UnknownSchemaError(`schema version ${id} of the AWS Glue Schema Registry has data format ${format ?? 'none'}, which Sluice does not read`);
    }
    try {
      return { format: format as SchemaFormat, codec: codecFor(format as SchemaFormat, definition) };
    } catch (error) {
      return new UnknownSchemaError(`schema version ${id}'s ${format} definition in the AWS Glue Schema Registry does not parse: ${(error as Error).message}`);
    }
  }

  schema(id: string): RegisteredSchema {
    const version = this.versions.get(id);
    if (version instanceof UnknownSchemaError) throw version;
    if (version) return version;
    throw new Error(
      `schema version ${id} was not looked up before its record was read: the deserializer's prepare was not called (in a PipelineTestHarness, send with sendAsync)`,
    );
  }

  /**
   * The version id of `schema` under the schema `name` of the registry: the version that holds
   * it, else, with `register`, a version registered now (the schema created first, if the
   * registry has none of that name). Glue checks the new version against the schema's
   * compatibility rule; a version it refuses fails the sink's start.
   */
  async idOf(name: string, format: SchemaFormat, schema: string, register: boolean): Promise<string> {
    const { glue, sdk } = await this.connect();
    const { registryName, compatibility = 'BACKWARD' } = this.options;
    const SchemaId = { RegistryName: registryName, SchemaName: name };
    const where = `Glue schema "${name}" in registry "${registryName}"`;
    let found: { id: string | undefined; status: string | undefined };
    try {
      const version = await glue.send(new sdk.GetSchemaByDefinitionCommand({ SchemaId, SchemaDefinition: schema }));
      found = { id: version.SchemaVersionId, status: version.Status };
    } catch (error) {
      if (errorName(error) !== 'EntityNotFoundException') throw this.unavailable(`look up the sink's schema in ${where}`, error, 'glue:GetSchemaByDefinition');
      if (!register) {
        throw new Error(`${where} does not hold the sink's schema: register it, or let the serialization schema register it (autoRegister: true)`, { cause: error });
      }
      found = await this.registered(name, format, schema, compatibility);
    }
    const id = await this.available(found, where);
    await this.prefetch(new Set([id]));
    return id;
  }

  /** Registers `schema` as a new version of `name`, creating the schema if the registry has none of that name. */
  private async registered(name: string, format: SchemaFormat, schema: string, compatibility: GlueCompatibility) {
    const { glue, sdk } = await this.connect();
    const { registryName } = this.options;
    const where = `Glue schema "${name}" in registry "${registryName}"`;
    for (let attempt = 0; ; attempt++) {
      try {
        const version = await glue.send(new sdk.RegisterSchemaVersionCommand({ SchemaId: { RegistryName: registryName, SchemaName: name }, SchemaDefinition: schema }));
        return { id: version.SchemaVersionId, status: version.Status };
      } catch (error) {
        if (errorName(error) !== 'EntityNotFoundException') throw this.unavailable(`register the sink's schema as a version of ${where}`, error, 'glue:RegisterSchemaVersion');
      }
      try {
        const created = await glue.send(
          new sdk.CreateSchemaCommand({ RegistryId: { RegistryName: registryName }, SchemaName: name, DataFormat: format, Compatibility: compatibility, SchemaDefinition: schema }),
        );
        return { id: created.SchemaVersionId, status: created.SchemaVersionStatus };
      } catch (error) {
        // Another container created the schema first: register the version in it.
        if (errorName(error) === 'AlreadyExistsException' && attempt === 0) continue;
        if (errorName(error) === 'EntityNotFoundException') {
          throw new Error(`The AWS Glue Schema Registry has no registry "${registryName}": create it, or name another in the options' registryName`, { cause: error });
        }
        throw this.unavailable(`create ${where}`, error, 'glue:CreateSchema');
      }
    }
  }

  /** Waits while Glue checks a new version's compatibility (PENDING), up to {@link PENDING_LIMIT_MS}. */
  private async available(found: { id: string | undefined; status: string | undefined }, where: string): Promise<string> {
    const { glue, sdk } = await this.connect();
    const { id } = found;
    if (id === undefined) throw new Error(`The AWS Glue Schema Registry answered without a schema version id for ${where}`);
    const deadline = Date.now() + PENDING_LIMIT_MS;
    let status = found.status;
    while (status === 'PENDING' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      try {
        status = (await glue.send(new sdk.GetSchemaVersionCommand({ SchemaVersionId: id }))).Status;
      } catch (error) {
        throw this.unavailable(`look up schema version ${id}`, error, 'glue:GetSchemaVersion');
      }
    }
    if (status === 'AVAILABLE') return id;
    if (status === 'FAILURE') {
      throw new Error(
        `The AWS Glue Schema Registry refused the sink's schema as version ${id} of ${where}: it is not compatible with the versions it holds under the schema's rule. ` +
          'Evolve the schema by that rule (a new Avro field needs a default), or write under another schema name',
      );
    }
    throw new Error(`Schema version ${id} of ${where} is ${status ?? 'of no status'}, not AVAILABLE${status === 'PENDING' ? ` after ${PENDING_LIMIT_MS / 1000} s` : ''}: the sink cannot write with it`);
  }

  private unavailable(what: string, error: unknown, action: string): SchemaRegistryUnavailableError {
    const denied = errorName(error) === 'AccessDeniedException';
    const fix = denied
      ? `the function's role needs ${action} on the registry and its schemas`
      : 'check the region and that the function can reach Glue; the batch fails and is retried, and no record is skipped';
    return new SchemaRegistryUnavailableError(
      `Could not ${what} at the AWS Glue Schema Registry: ${error instanceof Error ? error.message : String(error)}. ${fix[0]?.toUpperCase()}${fix.slice(1)}`,
      { cause: error },
    );
  }
}
