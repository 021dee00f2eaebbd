// Registry-aware formats: Avro, Protobuf and JSON Schema in Confluent's wire format.
export { avroRecordName, ConfluentRegistryAvroDeserializationSchema, ConfluentRegistryAvroSerializationSchema, type AvroSchema, type GenericRecord } from './avro.js';
export { ConfluentRegistryJsonSchemaDeserializationSchema, ConfluentRegistryJsonSchemaSerializationSchema } from './json-schema.js';
export { ConfluentRegistryProtobufDeserializationSchema, ConfluentRegistryProtobufSerializationSchema } from './protobuf.js';
export { SchemaRegistryUnavailableError, UnknownSchemaError, type SchemaRegistryOptions } from './registry.js';
export type { RegistrySerializationOptions } from './registry-schemas.js';
export { SubjectNameStrategy } from './subject-name-strategy.js';
