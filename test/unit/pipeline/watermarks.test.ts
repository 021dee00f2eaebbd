import { describe, expect, it } from 'vitest';
import {
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type DataStream,
} from '../../../lib/api/index.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

/** "key:amount" strings with their Kafka timestamps as event time, summed per key in 100 ms windows. */
function pipeline(strategy: WatermarkStrategy<string>, topics: string[] = ['in']) {
  const env = StreamExecutionEnvironment.create({ name: 'watermarks' });
  const read = (topic: string): DataStream<string> =>
    env.fromSource(
      KafkaSource.builder<string>()
        .setBootstrapServers('127.0.0.1:9092')
        .setTopics(topic)
        .setGroupId('test')
        .setValueOnlyDeserializer(new SimpleStringSchema())
        .build(),
      strategy,
      `source-${topic}`,
    );
  const [first, ...rest] = topics.map(read);
  if (!first) throw new Error('no topics');
  first
    .union(...rest)
    .map((line) => ({ key: line.split(':')[0] ?? '', amount: Number(line.split(':')[1]) }))
    .keyBy((e) => e.key)
    .window(TumblingEventTimeWindows.of(100))
    .sum('amount')
    .map((e, { timestamp }) => `${e.key}@${timestamp + 1}=${e.amount}`)
    .sinkTo(
      KafkaSink.builder<string>()
        .setBootstrapServers('127.0.0.1:9092')
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<string>().setTopic('out').setValueSerializationSchema(new SimpleStringSchema()).build(),
        )
        .build(),
    );
  return env;
}

const record = (value: string, timestamp: number, partition = 0) => ({ value, timestamp, partition });

describe('source watermarks', () => {
  it('leave out a partition its generator marked idle, until it emits again', () => {
    // An amount of 0 marks its partition idle; any other line emits its timestamp as the watermark.
    const markers = WatermarkStrategy.forGenerator<string>(() => ({
      onEvent: (line, timestamp, output) => (line.endsWith(':0') ? output.markIdle() : output.emitWatermark(timestamp)),
      onPeriodicEmit: () => undefined,
    }));
    const env = pipeline(markers);
    const harness = new PipelineTestHarness(env);
    harness.send('in', [record('a:1', 10, 0), record('a:2', 20, 1)]);
    harness.send('in', [record('a:4', 500, 0)]);
    expect(harness.outputValues('out'), 'partition 1 holds the watermark at 20').toEqual([]);
    harness.send('in', [record('a:0', 30, 1)]);
    expect(harness.outputValues('out'), 'partition 1 is idle: partition 0 alone says 500').toEqual(['a@100=3']);
    harness.send('in', [record('a:16', 520, 0), record('a:8', 450, 1)]);
    expect(harness.outputValues('out'), 'partition 1 is active again at 450, and holds the watermark there').toEqual(['a@100=3']);
  });

  it('are the minimum over the source’s partitions', () => {
    const harness = new PipelineTestHarness(pipeline(WatermarkStrategy.forMonotonousTimestamps()));
    harness.send('in', [record('a:1', 10, 0), record('a:2', 20, 1)]);
    harness.send('in', [record('a:4', 500, 0)]);
    expect(harness.outputValues('out')).toEqual([]);
    harness.send('in', [record('a:8', 150, 1)]);
    expect(harness.outputValues('out')).toEqual(['a@100=3']);
  });

  it('are held back by an assigned partition that sends nothing, until it turns idle', () => {
    const strategy = WatermarkStrategy.forBoundedOutOfOrderness<string>(0).withIdleness(1_000);
    const harness = new PipelineTestHarness(pipeline(strategy), { sourcePartitions: { in: [0, 1] } });
    harness.send('in', [record('a:1', 10, 0), record('a:2', 300, 0)]);
    harness.advanceProcessingTime(600).send('in', [record('a:4', 310, 0)]);
    harness.advanceProcessingTime(399);
    expect(harness.outputValues('out')).toEqual([]);
    // Partition 1 has sent nothing for 1,000 ms: it stops holding the watermark back.
    harness.advanceProcessingTime(1);
    expect(harness.outputValues('out')).toEqual(['a@100=1']);
  });

  it('trail the highest timestamp by the bounded out-of-orderness', () => {
    const harness = new PipelineTestHarness(pipeline(WatermarkStrategy.forBoundedOutOfOrderness<string>(50)));
    harness.send('in', [record('a:1', 10, 0), record('a:2', 149, 0)]);
    expect(harness.outputValues('out')).toEqual([]);
    harness.send('in', [record('a:4', 150, 0)]);
    expect(harness.outputValues('out')).toEqual(['a@100=1']);
  });

  it('take the timestamp assigner’s time over the record’s', () => {
    const strategy = WatermarkStrategy.forMonotonousTimestamps<string>().withTimestampAssigner((line) => Number(line.split(':')[2]));
    const harness = new PipelineTestHarness(pipeline(strategy));
    harness.send('in', [record('a:1:10', 999_999), record('a:2:250', 0)]);
    expect(harness.outputValues('out')).toEqual(['a@100=1']);
  });

  it('of unioned sources flow through the repartition as the minimum of the writing stages', () => {
    const harness = new PipelineTestHarness(pipeline(WatermarkStrategy.forMonotonousTimestamps(), ['left', 'right']));
    expect(harness.plan.stages.map((s) => s.input.kind)).toEqual(['source', 'source', 'repartition']);
    harness.send('left', [record('a:1', 10), record('a:2', 500)]);
    expect(harness.outputValues('out')).toEqual([]);
    harness.send('right', [record('a:4', 20), record('b:8', 120)]);
    expect(harness.outputValues('out')).toEqual(['a@100=5']);
  });
});
