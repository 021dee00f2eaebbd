import { describe, expect, it } from 'vitest';
import {
  DeliveryGuarantee,
  JsonSerializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  OffsetResetStrategy,
  OffsetsInitializer,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  WatermarkStrategy,
  type KafkaRecord,
} from '../../../lib/api/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

interface Seen {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: string | null;
  value: string;
  headers: string[];
}

function describeRecord(record: KafkaRecord): Seen {
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: record.key?.toString() ?? null,
    value: record.value?.toString() ?? '',
    headers: record.headers.map((h) => `${h.key}=${h.value?.toString() ?? ''}`),
  };
}

describe('KafkaSource', () => {
  it('gives a full record deserializer the key, value, headers, position and timestamp, from topics matching a pattern', () => {
    const env = StreamExecutionEnvironment.create({ name: 'connectors' });
    env
      .fromSource(
        KafkaSource.builder<Seen>()
          .setBootstrapServers(['127.0.0.1:9092', '127.0.0.1:9093'])
          .setTopicPattern(/^events-.*/)
          .setGroupId('g')
          .setStartingOffsets(OffsetsInitializer.timestamp(1_700_000_000_000))
          .setDeserializer({ deserialize: describeRecord })
          .build(),
        WatermarkStrategy.noWatermarks(),
        'events',
      )
      .sinkTo(
        KafkaSink.builder<Seen>()
          .setBootstrapServers('127.0.0.1:9092')
          .setRecordSerializer(
            KafkaRecordSerializationSchema.builder<Seen>().setTopic('seen').setValueSerializationSchema(new JsonSerializationSchema()).build(),
          )
          .build(),
      );
    const harness = new PipelineTestHarness(env);
    harness.send('events-eu', [{ key: 'k1', value: 'v1', partition: 3, timestamp: 42, headers: [{ key: 'h', value: Buffer.from('x') }] }]);
    harness.send('events-us', [{ key: null, value: 'v2' }]);
    expect(() => harness.send('other', [{ value: 'v3' }])).toThrow('No source of this pipeline reads topic "other"');
    expect(harness.outputValues('seen').map((v) => JSON.parse(v) as Seen)).toEqual([
      { topic: 'events-eu', partition: 3, offset: 0, timestamp: 42, key: 'k1', value: 'v1', headers: ['h=x'] },
      { topic: 'events-us', partition: 0, offset: 0, timestamp: 0, key: null, value: 'v2', headers: [] },
    ]);
  });

  it('describes its starting offsets', () => {
    expect(OffsetsInitializer.earliest()).toEqual({ kind: 'earliest' });
    expect(OffsetsInitializer.latest()).toEqual({ kind: 'latest' });
    expect(OffsetsInitializer.committedOffsets()).toEqual({ kind: 'committed', resetStrategy: 'NONE' });
    expect(OffsetsInitializer.committedOffsets(OffsetResetStrategy.LATEST)).toEqual({ kind: 'committed', resetStrategy: 'LATEST' });
    expect(() => OffsetsInitializer.timestamp(-1)).toThrow(/epoch milliseconds/);
  });
});

describe('KafkaSink', () => {
  it('serializes keys, values and headers, picks topics per element and partitions with a custom partitioner', () => {
    const env = StreamExecutionEnvironment.create({ name: 'connectors' });
    env.enableCheckpointing(10_000);
    env
      .fromSource(
        KafkaSource.builder<string>()
          .setBootstrapServers('127.0.0.1:9092')
          .setTopics('words')
          .setGroupId('g')
          .setValueOnlyDeserializer(new SimpleStringSchema())
          .build(),
        WatermarkStrategy.noWatermarks(),
        'words',
      )
      .sinkTo(
        KafkaSink.builder<string>()
          .setBootstrapServers('127.0.0.1:9092')
          .setRecordSerializer(
            KafkaRecordSerializationSchema.builder<string>()
              .setTopicSelector((word) => (word.length > 3 ? 'long-words' : 'short-words'))
              .setKeySerializationSchema((word) => word.slice(0, 1))
              .setValueSerializationSchema(new SimpleStringSchema())
              .setHeaderProvider((word) => ({ length: String(word.length) }))
              .setPartitioner((word, _key, _topic, partitions) => word.length % partitions)
              .build(),
          )
          .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
          .setTransactionalIdPrefix('words-tx')
          .setProperty('transaction.timeout.ms', '700000')
          .build(),
      );
    const harness = new PipelineTestHarness(env, { topicPartitions: { 'long-words': 3, 'short-words': 2 } });
    harness.send('words', [{ value: 'kafka', timestamp: 5 }, { value: 'the' }]);
    const written = [...harness.output('long-words'), ...harness.output('short-words')];
    expect(
      written.map((r) => ({
        topic: r.topic,
        key: r.key?.toString(),
        value: r.value?.toString(),
        partition: r.partition,
        headers: r.headers?.map((h) => `${h.key}=${h.value.toString()}`),
      })),
    ).toEqual([
      { topic: 'long-words', key: 'k', value: 'kafka', partition: 2, headers: ['length=5'] },
      { topic: 'short-words', key: 't', value: 'the', partition: 1, headers: ['length=3'] },
    ]);
    expect(written[0]?.timestamp).toBe(5);
  });
});
