// Types for the parts of kafkajs's internal modules that lib/kafka uses. kafkajs ships
// types only for its public API; these modules are stable across 2.x but undocumented,
// so this file names exactly what Sluice relies on and nothing more.
declare module 'kafkajs/src/cluster/index.js' {
  import type { logLevel, RetryOptions, ISocketFactory, PartitionMetadata } from 'kafkajs';

  export interface InternalLogger {
    namespace(name: string): InternalLogger;
    info(message: string, extra?: object): void;
    warn(message: string, extra?: object): void;
    error(message: string, extra?: object): void;
    debug(message: string, extra?: object): void;
  }

  export interface ProtocolRequest {
    request: {
      apiKey: number;
      apiVersion: number;
      apiName: string;
      encode(): Promise<unknown>;
      expectResponse?: () => boolean;
    };
    response: {
      decode(payload: Buffer): Promise<unknown>;
      parse(decoded: unknown): Promise<unknown>;
    };
  }

  export interface FetchedMessage {
    offset: string;
    key: Buffer | null;
    value: Buffer | null;
    timestamp: string;
    headers: Record<string, Buffer | Buffer[] | undefined>;
    isControlRecord: boolean;
    batchContext: { producerId: string; inTransaction: boolean; timestampType: number };
  }

  export interface FetchPartitionResponse {
    partition: number;
    errorCode: number;
    highWatermark: string;
    lastStableOffset: string;
    abortedTransactions: { producerId: string; firstOffset: string }[];
    messages: FetchedMessage[];
  }

  export interface ProducePartitionData {
    partition: number;
    firstSequence: number;
    messages: {
      key: Buffer | null;
      value: Buffer | null;
      headers?: Record<string, Buffer | Buffer[]>;
      timestamp?: number;
    }[];
  }

  export interface Broker {
    nodeId: number;
    connectionPool: { send(request: ProtocolRequest): Promise<unknown> };
    initProducerId(args: {
      transactionalId: string;
      transactionTimeout: number;
    }): Promise<{ producerId: string; producerEpoch: number }>;
    addPartitionsToTxn(args: {
      transactionalId: string;
      producerId: string;
      producerEpoch: number;
      topics: { topic: string; partitions: number[] }[];
    }): Promise<{
      errors: { topic: string; partitionErrors: { errorCode: number; partition: number }[] }[];
    }>;
    produce(args: {
      topicData: { topic: string; partitions: ProducePartitionData[] }[];
      transactionalId?: string;
      producerId?: string;
      producerEpoch?: number;
      acks?: number;
      timeout?: number;
    }): Promise<{
      topics: { topicName: string; partitions: { partition: number; errorCode: number; baseOffset: string }[] }[];
    }>;
    offsetCommit(args: {
      groupId: string;
      groupGenerationId: number;
      memberId: string;
      topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
    }): Promise<unknown>;
    endTxn(args: {
      transactionalId: string;
      producerId: string;
      producerEpoch: number;
      transactionResult: boolean;
    }): Promise<unknown>;
    listOffsets(args: {
      replicaId?: number;
      isolationLevel: number;
      topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[];
    }): Promise<{ responses: { topic: string; partitions: { partition: number; offset: string }[] }[] }>;
    fetch(args: {
      replicaId?: number;
      isolationLevel: number;
      maxWaitTime?: number;
      minBytes?: number;
      maxBytes?: number;
      topics: { topic: string; partitions: { partition: number; fetchOffset: string; maxBytes: number }[] }[];
    }): Promise<{ responses: { topicName: string; partitions: FetchPartitionResponse[] }[] }>;
  }

  export interface ClusterOptions {
    logger: InternalLogger;
    socketFactory: ISocketFactory;
    brokers: string[];
    clientId?: string;
    ssl?: unknown;
    sasl?: unknown;
    connectionTimeout?: number;
    requestTimeout?: number;
    enforceRequestTimeout?: boolean;
    metadataMaxAge?: number;
    allowAutoTopicCreation?: boolean;
    retry?: RetryOptions;
    offsets?: Map<unknown, unknown>;
    instrumentationEmitter?: import('kafkajs/src/instrumentation/emitter.js').default;
  }

  export default class Cluster {
    constructor(options: ClusterOptions);
    connect(): Promise<void>;
    disconnect(): Promise<void>;
    refreshMetadata(): Promise<void>;
    addTargetTopic(topic: string): Promise<void>;
    addMultipleTargetTopics(topics: string[]): Promise<void>;
    findBroker(args: { nodeId: number | string }): Promise<Broker>;
    findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
    findTopicPartitionMetadata(topic: string): PartitionMetadata[];
    findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<Broker>;
  }
  export type LogLevel = logLevel;
}

declare module 'kafkajs/src/instrumentation/emitter.js' {
  import type { InstrumentationEvent } from 'kafkajs';
  /** The emitter kafkajs's clients report to; its network requests come as `network.request`. */
  export default class InstrumentationEventEmitter {
    addListener(eventName: string, listener: (event: InstrumentationEvent<{ apiName: string; duration: number }>) => void): () => void;
  }
}

declare module 'kafkajs/src/loggers/index.js' {
  import type { logCreator, logLevel } from 'kafkajs';
  import type { InternalLogger } from 'kafkajs/src/cluster/index.js';
  export function createLogger(options: { level: logLevel; logCreator: logCreator }): InternalLogger;
}

declare module 'kafkajs/src/network/socketFactory.js' {
  import type { ISocketFactory } from 'kafkajs';
  export default function defaultSocketFactory(): ISocketFactory;
}

declare module 'kafkajs/src/protocol/encoder.js' {
  export default class Encoder {
    writeInt8(value: number): Encoder;
    writeInt16(value: number): Encoder;
    writeInt32(value: number): Encoder;
    writeUVarInt(value: number): Encoder;
    writeUVarIntString(value: string | null): Encoder;
    writeUVarIntArray(values: unknown[], type?: string): Encoder;
  }
}

declare module 'kafkajs/src/protocol/decoder.js' {
  export default class Decoder {
    constructor(buffer: Buffer);
    readInt16(): number;
    readInt32(): number;
    readInt64(): { toString(): string };
    readUVarInt(): number;
    readUVarIntString(): string | null;
    readUVarIntArray<T>(reader: (decoder: Decoder) => T): T[] | null;
    readTaggedFields(): void;
  }
}
