import type { Broker } from 'kafkajs/src/cluster/index.js';
import Decoder from 'kafkajs/src/protocol/decoder.js';
import Encoder from 'kafkajs/src/protocol/encoder.js';

/**
 * DescribeTransactions (API key 65, KIP-664), which kafkajs does not implement: the
 * coordinator's view of a transactional id. Version 0 is a flexible version, so the request
 * header carries tagged fields (v2) and so does the response header (v1); kafkajs writes
 * header v1 and reads only the correlation id, so the empty tagged-field section of each
 * header is written and read here, at the start of the body.
 */
const API_KEY = 65;
const API_VERSION = 0;

/** The coordinator's states (TransactionState in the broker). */
export type TransactionStateName =
  | 'Empty'
  | 'Ongoing'
  | 'PrepareCommit'
  | 'PrepareAbort'
  | 'CompleteCommit'
  | 'CompleteAbort'
  | 'Dead'
  | 'PrepareEpochFence';

export interface TransactionDescription {
  readonly errorCode: number;
  readonly transactionalId: string;
  readonly state: TransactionStateName;
  readonly timeoutMs: number;
  readonly startTimeMs: number;
  readonly producerId: string;
  readonly producerEpoch: number;
  readonly partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[];
}

const EMPTY_TAGGED_FIELDS = 0;

function encodeRequest(transactionalIds: readonly string[]): Encoder {
  const encoder = new Encoder().writeUVarInt(EMPTY_TAGGED_FIELDS).writeUVarInt(transactionalIds.length + 1);
  for (const id of transactionalIds) encoder.writeUVarIntString(id);
  return encoder.writeUVarInt(EMPTY_TAGGED_FIELDS);
}

function decodeState(decoder: Decoder): TransactionDescription {
  const errorCode = decoder.readInt16();
  const transactionalId = decoder.readUVarIntString() ?? '';
  const state = (decoder.readUVarIntString() ?? 'Dead') as TransactionStateName;
  const timeoutMs = decoder.readInt32();
  const startTimeMs = Number(decoder.readInt64().toString());
  const producerId = decoder.readInt64().toString();
  const producerEpoch = decoder.readInt16();
  const partitions =
    decoder.readUVarIntArray((topicDecoder) => {
      const topic = topicDecoder.readUVarIntString() ?? '';
      const ids = topicDecoder.readUVarIntArray((d) => d.readInt32()) ?? [];
      topicDecoder.readTaggedFields();
      return { topic, partitions: ids };
    }) ?? [];
  decoder.readTaggedFields();
  return { errorCode, transactionalId, state, timeoutMs, startTimeMs, producerId, producerEpoch, partitions };
}

/** Asks `coordinator` (the transaction coordinator of each id) to describe the ids. */
export async function describeTransactions(
  coordinator: Broker,
  transactionalIds: readonly string[],
): Promise<TransactionDescription[]> {
  const result = await coordinator.connectionPool.send({
    request: {
      apiKey: API_KEY,
      apiVersion: API_VERSION,
      apiName: 'DescribeTransactions',
      encode: () => Promise.resolve(encodeRequest(transactionalIds)),
    },
    response: {
      decode: (payload: Buffer) => {
        const decoder = new Decoder(payload);
        decoder.readTaggedFields();
        decoder.readInt32();
        const states = decoder.readUVarIntArray(decodeState) ?? [];
        return Promise.resolve(states);
      },
      parse: (decoded: unknown) => Promise.resolve(decoded),
    },
  });
  return result as TransactionDescription[];
}
