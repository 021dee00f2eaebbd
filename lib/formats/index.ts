// Registry-aware formats: Avro, Protobuf and JSON Schema in Confluent's wire format; Avro and JSON Schema in AWS Glue's.
export { avroRecordName, ConfluentRegistryAvroDeserializationSchema, ConfluentRegistryAvroSerializationSchema, type AvroSchema, type GenericRecord } from './avro.js';
export {
  GlueSchemaRegistryAvroDeserializationSchema,
  GlueSchemaRegistryAvroSerializationSchema,
  GlueSchemaRegistryJsonDeserializationSchema,
  GlueSchemaRegistryJsonSerializationSchema,
} from './glue.js';
export type { GlueCompatibility, GlueSchemaRegistryOptions } from './glue-registry.js';
export type { GlueCompression } from './glue-wire-format.js';
export { ConfluentRegistryJsonSchemaDeserializationSchema, ConfluentRegistryJsonSchemaSerializationSchema } from './json-schema.js';
export { ConfluentRegistryProtobufDeserializationSchema, ConfluentRegistryProtobufSerializationSchema } from './protobuf.js';
export { SchemaRegistryUnavailableError, UnknownSchemaError, type SchemaRegistryOptions } from './registry.js';
export type { RegistrySerializationOptions } from './registry-schemas.js';
export { SubjectNameStrategy } from './subject-name-strategy.js';
