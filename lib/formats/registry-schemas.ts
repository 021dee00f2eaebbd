import type { DeserializationSchema, SerializationSchema } from '../api/serialization.js';
import { registryClient, type RegisteredSchema, type RegistryClient, type SchemaFormat, type SchemaRegistryOptions } from './registry.js';
import { readWireFormat, schemaIdsOf, writeWireFormat } from './wire-format.js';

const FORMAT_NAMES: Record<SchemaFormat, string> = { AVRO: 'Avro', PROTOBUF: 'Protobuf', JSON: 'JSON Schema' };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads values in Confluent's wire format against a registry. Each batch's unknown schema ids
 * are looked up together before its first record is read (`prepare`), once per container; a
 * value that cannot be read fails alone, under the pipeline's bad-record policy.
 */
export abstract class RegistryDeserializationSchema<T> implements DeserializationSchema<T> {
  protected readonly registry: RegistryClient;

  protected constructor(
    registry: string | SchemaRegistryOptions,
    private readonly format: SchemaFormat,
  ) {
    this.registry = registryClient(registry);
  }

  async prepare(values: readonly (Buffer | null)[]): Promise<void> {
    await this.registry.prefetch(schemaIdsOf(values));
  }

  deserialize(value: Buffer | null): T {
    const { schemaId, payload } = readWireFormat(value);
    const writer = this.registry.schema(schemaId);
    if (writer.format !== this.format) {
      throw new Error(`its schema (id ${schemaId}) is ${FORMAT_NAMES[writer.format]}, and this deserializer reads ${FORMAT_NAMES[this.format]}`);
    }
    return this.read(schemaId, writer, payload);
  }

  /** Decodes `payload`; its errors say what is wrong with it. */
  protected abstract read(schemaId: number, writer: RegisteredSchema, payload: Buffer): T;

  /** The payload's decoding, with a decoder's error turned into one that names the schema. */
  protected decoded<R>(schemaId: number, decode: () => R): R {
    try {
      return decode();
    } catch (error) {
      throw new Error(`its ${FORMAT_NAMES[this.format]} payload does not match its writer schema (id ${schemaId}): ${messageOf(error)}`, { cause: error });
    }
  }
}

export interface RegistrySerializationOptions {
  /**
   * Register the schema under the subject when the sink opens (the default, as Confluent's
   * serializers). With false, the subject must already hold it, or the sink fails to start.
   */
  readonly autoRegister?: boolean;
}

/**
 * Writes values in Confluent's wire format under a registry subject. The schema's id is
 * registered or looked up once per container, when the sink opens, before its first element.
 */
export abstract class RegistrySerializationSchema<T> implements SerializationSchema<T> {
  private readonly registry: RegistryClient;
  private writer: { id: number; schema: RegisteredSchema } | undefined;
  private opening: Promise<void> | undefined;

  protected constructor(
    readonly subject: string,
    private readonly format: SchemaFormat,
    private readonly schemaText: string,
    registry: string | SchemaRegistryOptions,
    private readonly options: RegistrySerializationOptions = {},
  ) {
    if (subject.trim() === '') throw new Error(`A ${FORMAT_NAMES[format]} serialization schema needs a subject, such as "orders-value"`);
    this.registry = registryClient(registry);
  }

  open(): Promise<void> {
    this.opening ??= this.lookUp().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  private async lookUp(): Promise<void> {
    const id =
      this.options.autoRegister === false
        ? await this.registry.idOf(this.subject, this.format, this.schemaText)
        : await this.registry.register(this.subject, this.format, this.schemaText);
    this.writer = { id, schema: this.registry.schema(id) };
  }

  serialize(element: T): Buffer {
    if (!this.writer) {
      throw new Error(
        `The ${FORMAT_NAMES[this.format]} serialization schema of subject "${this.subject}" was not opened (in a PipelineTestHarness, send with sendAsync)`,
      );
    }
    const { id, schema } = this.writer;
    let payload: Buffer;
    try {
      payload = this.write(schema, element);
    } catch (error) {
      throw new Error(`the element does not fit the ${FORMAT_NAMES[this.format]} schema of subject "${this.subject}" (id ${id}): ${messageOf(error)}`, {
        cause: error,
      });
    }
    return writeWireFormat(id, payload);
  }

  protected write(schema: RegisteredSchema, element: T): Buffer {
    return schema.codec.toBuffer(element as object);
  }
}
