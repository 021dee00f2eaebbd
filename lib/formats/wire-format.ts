/**
 * Confluent's wire format: a zero magic byte, the schema's registry id as a 4-byte big-endian
 * integer, then the payload. Protobuf payloads start with the message's indexes in the schema.
 */
const MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

export interface WireRecord {
  readonly schemaId: number;
  readonly payload: Buffer;
}

/** The value's schema id and payload, or an error that says what is wrong with its framing. */
export function readWireFormat(value: Buffer | null): WireRecord {
  if (value === null) throw new Error('the record has a null value (a tombstone), not a value in the Confluent wire format');
  if (value.length === 0 || value[0] !== MAGIC_BYTE) {
    throw new Error(
      `its value does not start with the Confluent wire format's magic byte 0 (it starts with ${value.length === 0 ? 'nothing' : `byte ${value[0]}`}): ` +
        'it was not written by a registry-aware serializer; read the topic with the schema it was written in',
    );
  }
  if (value.length < HEADER_BYTES) {
    throw new Error(`its value is truncated: ${value.length} bytes, fewer than the wire format's 5-byte header (magic byte and schema id)`);
  }
  return { schemaId: value.readInt32BE(1), payload: value.subarray(HEADER_BYTES) };
}

/** The schema ids of the values in the wire format (others fail later, when read, as bad records). */
export function schemaIdsOf(values: readonly (Buffer | null)[]): Set<number> {
  const ids = new Set<number>();
  for (const value of values) if (value !== null && value.length >= HEADER_BYTES && value[0] === MAGIC_BYTE) ids.add(value.readInt32BE(1));
  return ids;
}

export function writeWireFormat(schemaId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(MAGIC_BYTE, 0);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, payload]);
}
