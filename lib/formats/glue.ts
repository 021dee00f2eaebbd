import { avroSchemaText, AvroRegistryDeserializationSchema, type AvroSchema, type GenericRecord } from './avro.js';
import { glueRegistryClient, type GlueSchemaRegistryOptions } from './glue-registry.js';
import { RegistryDeserializationSchema, RegistrySerializationSchema, type RegistrySerializationOptions } from './registry-schemas.js';

/**
 * Avro values in the AWS Glue Schema Registry's wire format, read with a reader schema (Flink's
 * `GlueSchemaRegistryAvroDeserializationSchema`). Each value's writer schema is its schema
 * version in Glue, fetched by its id and resolved into the reader schema by Avro's rules;
 * zlib-compressed payloads are inflated.
 */
export class GlueSchemaRegistryAvroDeserializationSchema<T> extends AvroRegistryDeserializationSchema<T, string> {
  private constructor(readerSchema: AvroSchema, registry: GlueSchemaRegistryOptions) {
    super(readerSchema, glueRegistryClient(registry));
  }

  /** Reads records as plain objects of the reader schema's fields. */
  static forGeneric(readerSchema: AvroSchema, registry: GlueSchemaRegistryOptions = {}): GlueSchemaRegistryAvroDeserializationSchema<GenericRecord> {
    return new GlueSchemaRegistryAvroDeserializationSchema<GenericRecord>(readerSchema, registry);
  }

  /** Reads records as `T`, a TypeScript type you declare to match the reader schema. */
  static forSpecific<T>(readerSchema: AvroSchema, registry: GlueSchemaRegistryOptions = {}): GlueSchemaRegistryAvroDeserializationSchema<T> {
    return new GlueSchemaRegistryAvroDeserializationSchema<T>(readerSchema, registry);
  }
}

/**
 * Avro values in the AWS Glue Schema Registry's wire format, under a schema name in a registry
 * (Flink's `GlueSchemaRegistryAvroSerializationSchema`; AWS's serializers name the schema after
 * the topic by default).
 */
export class GlueSchemaRegistryAvroSerializationSchema<T> extends RegistrySerializationSchema<T, string> {
  private constructor(schemaName: string, schema: AvroSchema, registry: GlueSchemaRegistryOptions, options?: RegistrySerializationOptions) {
    super(schemaName, 'AVRO', avroSchemaText(schema, `Glue schema "${schemaName}"`), glueRegistryClient(registry), options);
  }

  /** Writes plain objects with the schema's fields. */
  static forGeneric(
    schemaName: string,
    schema: AvroSchema,
    registry: GlueSchemaRegistryOptions = {},
    options?: RegistrySerializationOptions,
  ): GlueSchemaRegistryAvroSerializationSchema<GenericRecord> {
    return new GlueSchemaRegistryAvroSerializationSchema<GenericRecord>(schemaName, schema, registry, options);
  }

  /** Writes `T`, a TypeScript type you declare to match the schema. */
  static forSpecific<T>(
    schemaName: string,
    schema: AvroSchema,
    registry: GlueSchemaRegistryOptions = {},
    options?: RegistrySerializationOptions,
  ): GlueSchemaRegistryAvroSerializationSchema<T> {
    return new GlueSchemaRegistryAvroSerializationSchema<T>(schemaName, schema, registry, options);
  }
}

/**
 * JSON values in the AWS Glue Schema Registry's wire format, validated against the JSON Schema
 * of each value's schema version (Flink's `GlueSchemaRegistryJsonDeserializationSchema`): a value
 * that does not validate fails as a bad record, with the paths that failed.
 */
export class GlueSchemaRegistryJsonDeserializationSchema<T> extends RegistryDeserializationSchema<T, string> {
  private constructor(registry: GlueSchemaRegistryOptions) {
    super(glueRegistryClient(registry), 'JSON');
  }

  /** Reads values as `T`, a TypeScript type you declare to match the schema. */
  static of<T = unknown>(registry: GlueSchemaRegistryOptions = {}): GlueSchemaRegistryJsonDeserializationSchema<T> {
    return new GlueSchemaRegistryJsonDeserializationSchema<T>(registry);
  }
}

/** JSON values in the AWS Glue Schema Registry's wire format under a schema name, each validated before it is written. */
export class GlueSchemaRegistryJsonSerializationSchema<T> extends RegistrySerializationSchema<T, string> {
  private constructor(schemaName: string, schema: object | string, registry: GlueSchemaRegistryOptions, options?: RegistrySerializationOptions) {
    super(schemaName, 'JSON', typeof schema === 'string' ? schema : JSON.stringify(schema), glueRegistryClient(registry), options);
  }

  static of<T = unknown>(
    schemaName: string,
    schema: object | string,
    registry: GlueSchemaRegistryOptions = {},
    options?: RegistrySerializationOptions,
  ): GlueSchemaRegistryJsonSerializationSchema<T> {
    return new GlueSchemaRegistryJsonSerializationSchema<T>(schemaName, schema, registry, options);
  }
}
