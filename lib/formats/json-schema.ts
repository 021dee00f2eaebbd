import { registryClient, type SchemaRegistryOptions } from './registry.js';
import { RegistryDeserializationSchema, RegistrySerializationSchema, type RegistrySerializationOptions } from './registry-schemas.js';

/**
 * JSON values in Confluent's wire format, validated against the JSON Schema the registry holds
 * for each value's id: a value that does not validate fails as a bad record, with the paths
 * that failed.
 */
export class ConfluentRegistryJsonSchemaDeserializationSchema<T> extends RegistryDeserializationSchema<T> {
  private constructor(registry: string | SchemaRegistryOptions) {
    super(registryClient(registry), 'JSON');
  }

  /** Reads values as `T`, a TypeScript type you declare to match the schema. */
  static of<T = unknown>(registry: string | SchemaRegistryOptions): ConfluentRegistryJsonSchemaDeserializationSchema<T> {
    return new ConfluentRegistryJsonSchemaDeserializationSchema<T>(registry);
  }
}

/** JSON values in Confluent's wire format under a registry subject, each validated against the schema before it is written. */
export class ConfluentRegistryJsonSchemaSerializationSchema<T> extends RegistrySerializationSchema<T> {
  private constructor(subject: string, schema: object | string, registry: string | SchemaRegistryOptions, options?: RegistrySerializationOptions) {
    super(subject, 'JSON', typeof schema === 'string' ? schema : JSON.stringify(schema), registryClient(registry), options);
  }

  static of<T = unknown>(
    subject: string,
    schema: object | string,
    registry: string | SchemaRegistryOptions,
    options?: RegistrySerializationOptions,
  ): ConfluentRegistryJsonSchemaSerializationSchema<T> {
    return new ConfluentRegistryJsonSchemaSerializationSchema<T>(subject, schema, registry, options);
  }
}
