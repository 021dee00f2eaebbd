// Registry formats that are misconfigured fail when the pipeline is built, saying the fix;
// subject names follow Confluent's strategies.
import { describe, expect, it } from 'vitest';
import {
  avroRecordName,
  ConfluentRegistryAvroDeserializationSchema,
  ConfluentRegistryAvroSerializationSchema,
  ConfluentRegistryJsonSchemaSerializationSchema,
  SubjectNameStrategy,
} from '../../../lib/formats/index.js';

const ORDER = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'id', type: 'string' }] };

describe('registry formats, built', () => {
  it('refuse a registry URL that is not one, or not HTTP', () => {
    expect(() => ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER, 'registry.example')).toThrow(
      'The schema registry URL "registry.example" is not a URL: give one such as http://127.0.0.1:8081',
    );
    expect(() => ConfluentRegistryAvroDeserializationSchema.forGeneric(ORDER, 'ftp://registry')).toThrow('must start with http:// or https://');
  });

  it('refuse a schema that is not Avro, naming which', () => {
    expect(() => ConfluentRegistryAvroDeserializationSchema.forGeneric({ type: 'record', name: 'Order', fields: [{ name: 'id', type: 'strng' }] }, 'http://127.0.0.1:8081')).toThrow(
      /^The reader schema is not a valid Avro schema: .*strng/,
    );
    expect(() => ConfluentRegistryAvroSerializationSchema.forGeneric('orders-value', '{"type":', 'http://127.0.0.1:8081')).toThrow(
      /^The schema of subject "orders-value" is not a valid Avro schema/,
    );
  });

  it('refuse a sink without a subject', () => {
    expect(() => ConfluentRegistryJsonSchemaSerializationSchema.of(' ', { type: 'object' }, 'http://127.0.0.1:8081')).toThrow(
      'A JSON Schema serialization schema needs a subject, such as "orders-value"',
    );
  });

  it('name subjects by topic, record, or both', () => {
    expect(SubjectNameStrategy.topicName('orders')).toBe('orders-value');
    expect(SubjectNameStrategy.topicName('orders', true)).toBe('orders-key');
    expect(SubjectNameStrategy.recordName(avroRecordName(ORDER))).toBe('shop.Order');
    expect(SubjectNameStrategy.topicRecordName('orders', avroRecordName(ORDER))).toBe('orders-shop.Order');
    expect(() => avroRecordName('"string"')).toThrow('The record name strategies need a named Avro schema');
  });
});
