import { registryClient, type SchemaRegistryOptions } from './registry.js';
import type { RegisteredSchema } from './schema-source.js';
import { RegistryDeserializationSchema, RegistrySerializationSchema, type RegistrySerializationOptions } from './registry-schemas.js';

/**
 * Confluent's Protobuf payload starts with the message's indexes in its schema; the first
 * message of the schema is written as the single byte 0.
 */
const FIRST_MESSAGE_INDEX = Buffer.from([0]);

interface ProtobufMessage {
  toJSON(): unknown;
}

/**
 * Protobuf values in Confluent's wire format. Each value's schema comes from the registry by
 * its id, and values are read as plain objects (Protobuf's JSON mapping: 64-bit integers and
 * bytes as strings, enums by name). Protobuf's own compatibility applies: fields the reader
 * does not know are skipped, missing ones take their defaults.
 *
 * Sluice reads and writes the first message type of a schema; a value whose message indexes
 * name another message fails as a bad record.
 */
export class ConfluentRegistryProtobufDeserializationSchema<T> extends RegistryDeserializationSchema<T> {
  private constructor(registry: string | SchemaRegistryOptions) {
    super(registryClient(registry), 'PROTOBUF');
  }

  /** Reads messages as `T`, a TypeScript type you declare to match the message (as its JSON mapping). */
  static of<T = Record<string, unknown>>(registry: string | SchemaRegistryOptions): ConfluentRegistryProtobufDeserializationSchema<T> {
    return new ConfluentRegistryProtobufDeserializationSchema<T>(registry);
  }

  protected override read(schemaId: number, writer: RegisteredSchema, payload: Buffer): T {
    if (payload[0] !== 0) {
      throw new Error(
        `its Protobuf message indexes (schema id ${schemaId}) name a message other than the schema's first: ` +
          'Sluice reads the first message type of a schema; put the message first in its own schema',
      );
    }
    return this.decoded(schemaId, () => (writer.codec.fromBuffer(payload.subarray(1)) as ProtobufMessage).toJSON() as T);
  }
}

/** Protobuf values in Confluent's wire format under a registry subject, as the schema's first message type. */
export class ConfluentRegistryProtobufSerializationSchema<T> extends RegistrySerializationSchema<T> {
  private constructor(subject: string, schema: string, registry: string | SchemaRegistryOptions, options?: RegistrySerializationOptions) {
    super(subject, 'PROTOBUF', schema, registryClient(registry), options);
  }

  /** `schema` is the `.proto` text; `T` is a TypeScript type you declare to match its first message. */
  static of<T = Record<string, unknown>>(
    subject: string,
    schema: string,
    registry: string | SchemaRegistryOptions,
    options?: RegistrySerializationOptions,
  ): ConfluentRegistryProtobufSerializationSchema<T> {
    return new ConfluentRegistryProtobufSerializationSchema<T>(subject, schema, registry, options);
  }

  protected override write(schema: RegisteredSchema, element: T): Buffer {
    return Buffer.concat([FIRST_MESSAGE_INDEX, schema.codec.toBuffer(element as object)]);
  }
}
