import { describe, expect, it } from 'vitest';
import {
  DeliveryGuarantee,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  minutes,
  OutputCommit,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type DataStream,
} from '../../../lib/api/index.js';
import { assertDeployable, planPipeline, PipelineValidationError } from '../../../lib/plan/planner.js';
import { executeAndCollect } from '../../../lib/testing/index.js';

const servers = '127.0.0.1:9092';
const serializer = () =>
  KafkaRecordSerializationSchema.builder<string>().setTopic('out').setValueSerializationSchema(new SimpleStringSchema()).build();
const sink = (configure: (builder: ReturnType<typeof KafkaSink.builder<string>>) => unknown = () => undefined) => {
  const builder = KafkaSink.builder<string>().setBootstrapServers(servers).setRecordSerializer(serializer());
  configure(builder);
  return builder.build();
};
const source = () =>
  KafkaSource.builder<string>().setBootstrapServers(servers).setTopics('in').setGroupId('g').setValueOnlyDeserializer(new SimpleStringSchema()).build();

function pipeline(
  build: (input: DataStream<string>, env: StreamExecutionEnvironment) => void,
  watermarks: WatermarkStrategy<string> = WatermarkStrategy.forMonotonousTimestamps(),
) {
  const env = StreamExecutionEnvironment.create({ name: 'validated' });
  build(env.fromSource(source(), watermarks, 'in'), env);
  return () => planPipeline(env);
}

describe('validation when a pipeline is built', () => {
  it('EXACTLY_ONCE needs a transactional id prefix', () => {
    expect(() => sink((b) => b.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE))).toThrow(
      "KafkaSink.builder() with DeliveryGuarantee.EXACTLY_ONCE needs setTransactionalIdPrefix('my-pipeline-tx'): a prefix unique to this pipeline, from which its transactional ids are named",
    );
  });

  it('a transaction timeout above the brokers’ maximum is refused', () => {
    expect(() => sink((b) => b.setProperty('transaction.timeout.ms', '3600000'))).toThrow(
      "KafkaSink.builder(): transaction.timeout.ms (3600000) exceeds the brokers' transaction.max.timeout.ms (900000); the broker would refuse every transaction. Lower transaction.timeout.ms, or raise the brokers' limit and call setBrokerTransactionMaxTimeout.",
    );
    expect(() =>
      sink((b) => b.setProperty('transaction.timeout.ms', '3600000').setBrokerTransactionMaxTimeout(3_600_000)),
    ).not.toThrow();
  });

  it('a transaction timeout must outlast checkpoint interval + checkpoint timeout + commit delay', () => {
    const plan = pipeline((input, env) => {
      env.enableCheckpointing(minutes(5));
      input.sinkTo(sink((b) => b.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE).setTransactionalIdPrefix('tx'))).name('out');
    });
    expect(plan).toThrow(PipelineValidationError);
    expect(plan).toThrow(
      'out: transaction.timeout.ms (900000) must exceed checkpoint interval (300000) + checkpoint timeout (600000) + max commit delay (60000) = 960000, or the broker may abort a transaction before its checkpoint commits it. Raise transaction.timeout.ms (up to the brokers\' transaction.max.timeout.ms), or shorten the checkpoint interval or timeout.',
    );
  });

  it('the output commit is one of OutputCommit, and reaches the plan', () => {
    const env = StreamExecutionEnvironment.create({ name: 'commit' });
    expect(() => env.getCheckpointConfig().setOutputCommit('per-record' as OutputCommit)).toThrow(
      'Output commit must be OutputCommit.ON_CHECKPOINT or OutputCommit.PER_BATCH, not per-record',
    );
    const perBatch = pipeline((input, pipelineEnv) => {
      pipelineEnv.enableCheckpointing(5_000).getCheckpointConfig().setOutputCommit(OutputCommit.PER_BATCH);
      input.sinkTo(sink()).name('out');
    });
    expect(perBatch().checkpointing.outputCommit).toBe(OutputCommit.PER_BATCH);
    expect(pipeline((input) => input.sinkTo(sink()).name('out'))().checkpointing.outputCommit).toBe(OutputCommit.ON_CHECKPOINT);
  });

  it('EXACTLY_ONCE needs checkpointing', () => {
    const plan = pipeline((input) => {
      input.sinkTo(sink((b) => b.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE).setTransactionalIdPrefix('tx'))).name('out');
    });
    expect(plan).toThrow('out is EXACTLY_ONCE, which commits its output at checkpoints: call env.enableCheckpointing(ms) (for example 60_000)');
  });

  it('state and timers need keyBy', () => {
    expect(() =>
      pipeline((input) => {
        input.process({ processElement: () => undefined, onTimer: () => undefined } as never);
      }),
    ).toThrow('A function with state or timers (open/onTimer) needs a keyed stream: call keyBy(...) before process(...)');
  });

  it('an event-time window needs a watermark strategy', () => {
    const plan = pipeline(
      (input) => {
        input.keyBy((s) => s).window(TumblingEventTimeWindows.of(1_000)).reduce((a) => a).name('per-second').sinkTo(sink());
      },
      WatermarkStrategy.noWatermarks(),
    );
    expect(plan).toThrow(
      'per-second uses event time, but source "in" has WatermarkStrategy.noWatermarks(): give it WatermarkStrategy.forBoundedOutOfOrderness(ms) (or forMonotonousTimestamps()), or assignTimestampsAndWatermarks(...) after it, or use a processing-time window',
    );
  });

  it('operator names are unique', () => {
    const plan = pipeline((input) => {
      input.map((s) => s).name('clean').filter(Boolean).name('clean').sinkTo(sink());
    });
    expect(plan).toThrow(
      'Two operators are named "clean" (a map and a filter); operator names must be unique because they name state and topics: rename one with .name(\'...\')',
    );
  });

  it('a pipeline must write somewhere', () => {
    expect(pipeline((input) => input.map((s) => s))).toThrow(/writes nowhere: end it with \.sinkTo/);
  });

  it('sources and sinks say what they miss', () => {
    expect(() => KafkaSource.builder().build()).toThrow("KafkaSource.builder() needs setBootstrapServers('host:port')");
    expect(() => KafkaSource.builder().setBootstrapServers(servers).build()).toThrow(/needs setTopics\('orders'\) or setTopicPattern/);
    expect(() => KafkaSource.builder().setBootstrapServers(servers).setTopics('in').build()).toThrow(/needs setGroupId/);
    expect(() => KafkaSource.builder().setBootstrapServers(servers).setTopics('in').setGroupId('g').build()).toThrow(
      /needs setValueOnlyDeserializer\(new SimpleStringSchema\(\)\)/,
    );
    expect(() => KafkaSource.builder().setBootstrapServers('nope')).toThrow(/KafkaSource bootstrap servers has "nope", which is not host:port/);
    expect(() => KafkaSink.builder().setBootstrapServers(servers).build()).toThrow(/needs setRecordSerializer/);
    expect(() => KafkaRecordSerializationSchema.builder().build()).toThrow(/needs setTopic\('name'\) or setTopicSelector/);
    expect(() => StreamExecutionEnvironment.create({ name: 'Order Aggregation' })).toThrow(/lowercase letters, digits and dashes/);
  });
});

describe('env.fromData', () => {
  it('runs in executeAndCollect, and is refused where Kafka feeds the pipeline', () => {
    const env = StreamExecutionEnvironment.create({ name: 'bounded' });
    const words = env.fromData(['a', 'bb', 'ccc'], WatermarkStrategy.noWatermarks(), 'words').map((word) => word.length);
    expect(executeAndCollect(words)).toEqual([1, 2, 3]);
    expect(() => assertDeployable(planPipeline(env))).toThrow(
      'Source "words" is env.fromData(...): bounded data for tests, which runs in executeAndCollect or a PipelineTestHarness. To deploy or run the pipeline offline, read a topic with env.fromSource(KafkaSource.builder()...)',
    );
    const kafka = StreamExecutionEnvironment.create({ name: 'kafka' });
    const lines = kafka.fromSource(source(), WatermarkStrategy.noWatermarks(), 'lines');
    expect(() => executeAndCollect(lines)).toThrow('executeAndCollect runs pipelines of env.fromData sources; "lines" reads Kafka');
  });
});

describe('element timestamps in the types', () => {
  it('are numbers from a source on, and may be missing after a keyed process function, whose processing-time timers emit without one', () => {
    const env = StreamExecutionEnvironment.create({ name: 'typed' });
    const fromSource = env.fromSource(source(), WatermarkStrategy.forMonotonousTimestamps(), 'in');
    const seen: number[] = [];
    const windowed = fromSource
      .map((line, { timestamp }) => {
        const eventTime: number = timestamp;
        seen.push(eventTime);
        return line.length;
      })
      .keyBy((length) => length)
      .window(TumblingEventTimeWindows.of(minutes(1)))
      .reduce((a, b) => a + b)
      .map((total, { timestamp }) => total + timestamp);
    const processed = windowed.keyBy((total) => total).process<number>({
      processElement: (total, _context, out) => out.collect(total),
    });
    processed.map((total, { timestamp }) => {
      // @ts-expect-error A processing-time timer's output has no timestamp.
      const eventTime: number = timestamp;
      return total + eventTime;
    });
    expect(seen).toEqual([]);
  });
});

describe('assignTimestampsAndWatermarks', () => {
  const bounded = WatermarkStrategy.forBoundedOutOfOrderness<string>(10).withTimestampAssigner((line) => Number(line));
  const windowed = (input: DataStream<string, number>) =>
    input.keyBy((line) => line).window(TumblingEventTimeWindows.of(minutes(1))).reduce((a) => a).sinkTo(sink());

  it('gives a source without watermarks its event time, after element-wise functions', () => {
    expect(
      pipeline((input) => windowed(input.map((line) => line.trim()).assignTimestampsAndWatermarks(bounded)), WatermarkStrategy.noWatermarks())().stages,
    ).toHaveLength(2);
  });

  it('is refused where a stage could not take its watermarks from it', () => {
    expect(pipeline((input) => windowed(input.assignTimestampsAndWatermarks(bounded)))).toThrow(
      'has a WatermarkStrategy of its own (monotonous timestamps); give it WatermarkStrategy.noWatermarks() and let assignTimestampsAndWatermarks set event time, or drop one of the two',
    );
    expect(
      pipeline((input) => windowed(input.keyBy((line) => line).map((line) => line).assignTimestampsAndWatermarks(bounded)), WatermarkStrategy.noWatermarks()),
    ).toThrow("assignTimestampsAndWatermarks must come before the first keyBy that repartitions: a later stage's watermark is the minimum of the stages before it");
    expect(
      pipeline((input) => {
        input.map((line) => line).sinkTo(sink());
        windowed(input.assignTimestampsAndWatermarks(bounded));
      }, WatermarkStrategy.noWatermarks()),
    ).toThrow('assignTimestampsAndWatermarks must be the only reader of a plain chain from the source (no union, branch or side output before it)');
  });
});
