// What the registry-aware formats need of a schema registry, Confluent's or AWS Glue's.

/** The formats the registries hold, as they name them. */
export type SchemaFormat = 'AVRO' | 'PROTOBUF' | 'JSON';

/** A schema as its registry client parsed it: it reads and writes payloads. */
export interface PayloadCodec {
  toBuffer(payload: object): Buffer;
  fromBuffer(payload: Buffer): unknown;
}

export interface RegisteredSchema {
  readonly format: SchemaFormat;
  readonly codec: PayloadCodec;
}

/** A schema's id in its registry: Confluent's integer, or a Glue schema version's UUID. */
export type SchemaId = number | string;

/** How a registry frames its values and finds the writer schemas their ids name (Confluent's or AWS Glue's). */
export interface SchemaSource<Id extends SchemaId> {
  /** The ids of the values framed by this registry's wire format (others fail later, when read, as bad records). */
  schemaIdsOf(values: readonly (Buffer | null)[]): Set<Id>;
  /** Looks up the ids not yet known, together; a registry that cannot be asked fails the batch. */
  prefetch(ids: ReadonlySet<Id>): Promise<void>;
  /** The value's schema id and payload, or an error that says what is wrong with its framing. */
  unframe(value: Buffer | null): { readonly schemaId: Id; readonly payload: Buffer };
  /** A schema {@link prefetch} looked up, or the error that makes its records bad records. */
  schema(id: Id): RegisteredSchema;
}

/** Where a registry-aware sink's schema is registered, and how its values are framed. */
export interface SchemaTarget<Id extends SchemaId> {
  /** The schema's id under `name`, registering it there first (`register`) or only finding it. */
  idOf(name: string, format: SchemaFormat, schema: string, register: boolean): Promise<Id>;
  schema(id: Id): RegisteredSchema;
  frame(id: Id, payload: Buffer): Buffer;
  /** What the registry calls the name a schema is registered under: a Confluent "subject". */
  readonly nameKind: string;
}
