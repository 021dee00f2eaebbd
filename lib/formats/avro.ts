import avro from 'avsc';
import { registryClient, type SchemaRegistryOptions } from './registry.js';
import { RegistryDeserializationSchema, RegistrySerializationSchema, type RegistrySerializationOptions } from './registry-schemas.js';
import type { RegisteredSchema, SchemaId, SchemaSource } from './schema-source.js';

/** An Avro schema: its JSON text, or its JSON as an object (checked when the schema is built). */
export type AvroSchema = string | object;

type AvroResolver = ReturnType<avro.Type['createResolver']>;

/** A record read with a generic reader schema: field names to values. */
export type GenericRecord = Record<string, unknown>;

function parseAvroSchema(schema: AvroSchema, what: string): avro.Type {
  try {
    return avro.Type.forSchema((typeof schema === 'string' ? JSON.parse(schema) : schema) as avro.Schema);
  } catch (error) {
    throw new Error(`${what} is not a valid Avro schema: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The full name of an Avro record schema (namespace and name), for the record name strategies. */
export function avroRecordName(schema: AvroSchema): string {
  const type = parseAvroSchema(schema, 'The schema');
  if (!type.name) throw new Error('The record name strategies need a named Avro schema (a record, enum or fixed)');
  return type.name;
}

/**
 * Avro values read with a reader schema. Each value's writer schema comes from its registry by
 * its id, and is resolved into the reader schema by Avro's rules: a field the writer lacks takes
 * its default, a field the reader lacks is skipped, numbers widen. A writer schema that cannot be
 * resolved (a new field without a default, a changed type) fails its records under the
 * bad-record policy, with both schemas named.
 */
export abstract class AvroRegistryDeserializationSchema<T, Id extends SchemaId> extends RegistryDeserializationSchema<T, Id> {
  private readonly reader: avro.Type;
  /** Per writer schema id: the resolver into the reader schema, null when the two are the same, or why they cannot be resolved. */
  private readonly resolvers = new Map<Id, AvroResolver | null | Error>();

  protected constructor(readerSchema: AvroSchema, registry: SchemaSource<Id>) {
    super(registry, 'AVRO');
    this.reader = parseAvroSchema(readerSchema, 'The reader schema');
  }

  protected override read(schemaId: Id, writer: RegisteredSchema, payload: Buffer): T {
    const resolver = this.resolverFor(schemaId, writer.codec as unknown as avro.Type);
    if (resolver instanceof Error) throw resolver;
    return this.decoded(schemaId, () => this.reader.fromBuffer(payload, resolver ?? undefined) as T);
  }

  private resolverFor(schemaId: Id, writer: avro.Type): AvroResolver | null | Error {
    let resolver = this.resolvers.get(schemaId);
    if (resolver === undefined) {
      try {
        resolver = this.reader.equals(writer) ? null : this.reader.createResolver(writer);
      } catch (error) {
        resolver = new Error(
          `its writer schema (id ${schemaId}, ${writer.name ?? writer.typeName}) cannot be read as the reader schema ${this.reader.name ?? this.reader.typeName}: ` +
            `${error instanceof Error ? error.message : String(error)}. Evolve the schema compatibly (give a new field a default), or read with a reader schema that resolves`,
        );
      }
      this.resolvers.set(schemaId, resolver);
    }
    return resolver;
  }
}

/** Avro values in Confluent's wire format, read with a reader schema (Flink's `ConfluentRegistryAvroDeserializationSchema`). */
export class ConfluentRegistryAvroDeserializationSchema<T> extends AvroRegistryDeserializationSchema<T, number> {
  private constructor(readerSchema: AvroSchema, registry: string | SchemaRegistryOptions) {
    super(readerSchema, registryClient(registry));
  }

  /** Reads records as plain objects of the reader schema's fields. */
  static forGeneric(readerSchema: AvroSchema, registry: string | SchemaRegistryOptions): ConfluentRegistryAvroDeserializationSchema<GenericRecord> {
    return new ConfluentRegistryAvroDeserializationSchema<GenericRecord>(readerSchema, registry);
  }

  /** Reads records as `T`, a TypeScript type you declare to match the reader schema. */
  static forSpecific<T>(readerSchema: AvroSchema, registry: string | SchemaRegistryOptions): ConfluentRegistryAvroDeserializationSchema<T> {
    return new ConfluentRegistryAvroDeserializationSchema<T>(readerSchema, registry);
  }
}

/** An Avro schema's canonical JSON text, as a sink registers it. */
export function avroSchemaText(schema: AvroSchema, name: string): string {
  return JSON.stringify(parseAvroSchema(schema, `The schema of ${name}`).schema());
}

/** Avro values in Confluent's wire format under a registry subject (Flink's `ConfluentRegistryAvroSerializationSchema`). */
export class ConfluentRegistryAvroSerializationSchema<T> extends RegistrySerializationSchema<T> {
  private constructor(subject: string, schema: AvroSchema, registry: string | SchemaRegistryOptions, options?: RegistrySerializationOptions) {
    super(subject, 'AVRO', avroSchemaText(schema, `subject "${subject}"`), registryClient(registry), options);
  }

  /** Writes plain objects with the schema's fields. */
  static forGeneric(
    subject: string,
    schema: AvroSchema,
    registry: string | SchemaRegistryOptions,
    options?: RegistrySerializationOptions,
  ): ConfluentRegistryAvroSerializationSchema<GenericRecord> {
    return new ConfluentRegistryAvroSerializationSchema<GenericRecord>(subject, schema, registry, options);
  }

  /** Writes `T`, a TypeScript type you declare to match the schema. */
  static forSpecific<T>(
    subject: string,
    schema: AvroSchema,
    registry: string | SchemaRegistryOptions,
    options?: RegistrySerializationOptions,
  ): ConfluentRegistryAvroSerializationSchema<T> {
    return new ConfluentRegistryAvroSerializationSchema<T>(subject, schema, registry, options);
  }
}
