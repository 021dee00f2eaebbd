import type { DeserializationSchema, SerializationSchema } from '../api/serialization.js';
import type { RegisteredSchema, SchemaFormat, SchemaId, SchemaSource, SchemaTarget } from './schema-source.js';

const FORMAT_NAMES: Record<SchemaFormat, string> = { AVRO: 'Avro', PROTOBUF: 'Protobuf', JSON: 'JSON Schema' };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads values in a registry's wire format. Each batch's unknown schema ids are looked up
 * together before its first record is read (`prepare`), once per container; a value that cannot
 * be read fails alone, under the pipeline's bad-record policy.
 */
export abstract class RegistryDeserializationSchema<T, Id extends SchemaId = number> implements DeserializationSchema<T> {
  protected constructor(
    protected readonly registry: SchemaSource<Id>,
    private readonly format: SchemaFormat,
  ) {}

  async prepare(values: readonly (Buffer | null)[]): Promise<void> {
    await this.registry.prefetch(this.registry.schemaIdsOf(values));
  }

  deserialize(value: Buffer | null): T {
    const { schemaId, payload } = this.registry.unframe(value);
    const writer = this.registry.schema(schemaId);
    if (writer.format !== this.format) {
      throw new Error(`its schema (id ${schemaId}) is ${FORMAT_NAMES[writer.format]}, and this deserializer reads ${FORMAT_NAMES[this.format]}`);
    }
    return this.read(schemaId, writer, payload);
  }

  /** Decodes `payload` with its writer schema's codec; its errors say what is wrong with it. */
  protected read(schemaId: Id, writer: RegisteredSchema, payload: Buffer): T {
    return this.decoded(schemaId, () => writer.codec.fromBuffer(payload) as T);
  }

  /** The payload's decoding, with a decoder's error turned into one that names the schema. */
  protected decoded<R>(schemaId: Id, decode: () => R): R {
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
 * Writes values in a registry's wire format under a name there (a Confluent subject, a Glue
 * schema). The schema's id is registered or looked up once per container, when the sink opens,
 * before its first element.
 */
export abstract class RegistrySerializationSchema<T, Id extends SchemaId = number> implements SerializationSchema<T> {
  private writer: { id: Id; schema: RegisteredSchema } | undefined;
  private opening: Promise<void> | undefined;

  protected constructor(
    readonly subject: string,
    private readonly format: SchemaFormat,
    private readonly schemaText: string,
    private readonly registry: SchemaTarget<Id>,
    private readonly options: RegistrySerializationOptions = {},
  ) {
    if (subject.trim() === '') throw new Error(`A ${FORMAT_NAMES[format]} serialization schema needs a ${registry.nameKind}, such as "orders-value"`);
  }

  open(): Promise<void> {
    this.opening ??= this.lookUp().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  private async lookUp(): Promise<void> {
    const id = await this.registry.idOf(this.subject, this.format, this.schemaText, this.options.autoRegister !== false);
    this.writer = { id, schema: this.registry.schema(id) };
  }

  serialize(element: T): Buffer {
    if (!this.writer) {
      throw new Error(
        `The ${FORMAT_NAMES[this.format]} serialization schema of ${this.registry.nameKind} "${this.subject}" was not opened (in a PipelineTestHarness, send with sendAsync)`,
      );
    }
    const { id, schema } = this.writer;
    let payload: Buffer;
    try {
      payload = this.write(schema, element);
    } catch (error) {
      throw new Error(`the element does not fit the ${FORMAT_NAMES[this.format]} schema of ${this.registry.nameKind} "${this.subject}" (id ${id}): ${messageOf(error)}`, {
        cause: error,
      });
    }
    return this.registry.frame(id, payload);
  }

  protected write(schema: RegisteredSchema, element: T): Buffer {
    return schema.codec.toBuffer(element as object);
  }
}
