import { deflateSync, inflateSync } from 'node:zlib';

/**
 * AWS Glue Schema Registry's wire format, as its serializers write it: a header version byte 3,
 * a compression byte (0 none, 5 zlib), the schema version id as a 16-byte UUID, then the
 * payload, zlib-deflated when the compression byte says so.
 */
const HEADER_VERSION = 3;
const UNCOMPRESSED = 0;
const ZLIB = 5;
const HEADER_BYTES = 18;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How a Glue serializer compresses its payloads: not at all (the default), or with zlib. */
export type GlueCompression = 'NONE' | 'ZLIB';

export interface GlueWireRecord {
  readonly schemaId: string;
  readonly payload: Buffer;
}

export function isSchemaVersionId(text: string): boolean {
  return UUID.test(text);
}

function uuidOf(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The value's schema version id and its (inflated) payload, or an error that says what is wrong with its framing. */
export function readGlueWireFormat(value: Buffer | null): GlueWireRecord {
  if (value === null) throw new Error('the record has a null value (a tombstone), not a value in the AWS Glue Schema Registry wire format');
  if (value.length === 0 || value[0] !== HEADER_VERSION) {
    throw new Error(
      `its value does not start with the AWS Glue Schema Registry's header version byte 3 (it starts with ${value.length === 0 ? 'nothing' : `byte ${value[0]}`}): ` +
        'it was not written by a Glue Schema Registry serializer; read the topic with the format it was written in',
    );
  }
  if (value.length < HEADER_BYTES) {
    throw new Error(`its value is truncated: ${value.length} bytes, fewer than the Glue wire format's 18-byte header (version, compression, schema version id)`);
  }
  const schemaId = uuidOf(value.subarray(2, HEADER_BYTES));
  const payload = value.subarray(HEADER_BYTES);
  if (value[1] === UNCOMPRESSED) return { schemaId, payload };
  if (value[1] !== ZLIB) throw new Error(`its Glue wire format names compression byte ${value[1]}, neither 0 (none) nor 5 (zlib)`);
  try {
    return { schemaId, payload: inflateSync(payload) };
  } catch (error) {
    throw new Error(`its payload is marked zlib-compressed but does not inflate: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The schema version ids of the values in the Glue wire format (others fail later, when read, as bad records). */
export function glueSchemaIdsOf(values: readonly (Buffer | null)[]): Set<string> {
  const ids = new Set<string>();
  for (const value of values) {
    if (value !== null && value.length >= HEADER_BYTES && value[0] === HEADER_VERSION) ids.add(uuidOf(value.subarray(2, HEADER_BYTES)));
  }
  return ids;
}

export function writeGlueWireFormat(schemaId: string, payload: Buffer, compression: GlueCompression = 'NONE'): Buffer {
  if (!isSchemaVersionId(schemaId)) throw new Error(`${JSON.stringify(schemaId)} is not a Glue schema version id (a UUID)`);
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(HEADER_VERSION, 0);
  header.writeUInt8(compression === 'ZLIB' ? ZLIB : UNCOMPRESSED, 1);
  Buffer.from(schemaId.replaceAll('-', ''), 'hex').copy(header, 2);
  return Buffer.concat([header, compression === 'ZLIB' ? deflateSync(payload) : payload]);
}
