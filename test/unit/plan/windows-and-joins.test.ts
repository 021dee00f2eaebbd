import { describe, expect, it } from 'vitest';
import {
  CountTrigger,
  DeltaTrigger,
  EventTimeSessionWindows,
  JsonDeserializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  MapStateDescriptor,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  TimeEvictor,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  type DataStream,
} from '../../../lib/api/index.js';
import { formatPlan } from '../../../lib/plan/explain.js';
import { planPipeline } from '../../../lib/plan/planner.js';

interface Reading {
  sensor: string;
  celsius: number;
  at: number;
}

function pipeline(build: (readings: DataStream<Reading, number>) => DataStream<Reading>) {
  const env = StreamExecutionEnvironment.create({ name: 'readings' }).setParallelism(6);
  build(source(env))
    .map((reading) => JSON.stringify(reading))
    .sinkTo(
      KafkaSink.builder<string>()
        .setBootstrapServers('127.0.0.1:9092')
        .setRecordSerializer(KafkaRecordSerializationSchema.builder<string>().setTopic('out').setValueSerializationSchema(new SimpleStringSchema()).build())
        .build(),
    );
  return planPipeline(env);
}

function source(env: StreamExecutionEnvironment): DataStream<Reading, number> {
  return env.fromSource(
    KafkaSource.builder<Reading>()
      .setBootstrapServers('127.0.0.1:9092')
      .setTopics('readings')
      .setGroupId('readings')
      .setValueOnlyDeserializer(new JsonDeserializationSchema<Reading>())
      .setPartitionedByRecordKey()
      .build(),
    WatermarkStrategy.forMonotonousTimestamps<Reading>().withTimestampAssigner((r) => r.at),
    'readings',
  );
}

describe('two inputs in the plan', () => {
  it('keys both inputs of a connect in one keyBy, and plans none of their own keyBys (in place here: the source is keyed by sensor)', () => {
    const plan = pipeline((readings) => {
      const hot = readings.filter((r) => r.celsius > 30).keyBy((r) => r.sensor);
      const cold = readings.filter((r) => r.celsius < 0).keyBy((r) => r.sensor);
      return hot.connect(cold).process<Reading>({
        processElement1: (reading, _context, out) => out.collect(reading),
        processElement2: (reading, _context, out) => out.collect(reading),
      });
    });
    expect(plan.stages).toHaveLength(1);
    expect(plan.stages[0]?.nodes.map((node) => (node.role === 'operator' ? node.transformation.operatorKind : node.role))).toEqual([
      'source',
      'filter',
      'filter',
      'connect',
      'connect',
      'union',
      'keyBy',
      'keyedProcess',
      'map',
      'sink',
    ]);
  });
});

describe('broadcast connections in the plan', () => {
  it('sends a non-keyed stream and its broadcast rules through one repartition topic to a stage that explains both', () => {
    const limits = new MapStateDescriptor<string, number>('limits');
    const plan = pipeline((readings) =>
      readings.connect(readings.filter((r) => r.sensor === 'rules').broadcast(limits)).process<Reading>({
        processElement: (reading, { getBroadcastState }, out) => {
          if (reading.celsius > (getBroadcastState(limits).get(reading.sensor) ?? 30)) out.collect(reading);
        },
        processBroadcastElement: (rule, { getBroadcastState }) => getBroadcastState(limits).put(rule.sensor, rule.celsius),
      }),
    );
    expect(plan.stages.map((stage) => stage.input)).toMatchObject([{ kind: 'source' }, { kind: 'repartition', partitions: 6 }]);
    const explained = formatPlan(plan);
    expect(explained).toContain(
      'writes readings-keyBy-repartition: broadcast elements to every partition, the others each to the partition of its record’s number ← union',
    );
    expect(explained).toContain('broadcast process function, broadcast state limits ← keyBy');
  });
});

describe('partitioning after a union', () => {
  it('repartitions a keyBy on a new key after a union of streams keyed by another, as connect and join make', () => {
    const plan = pipeline((readings) => {
      const peaks = readings.keyBy((r) => r.sensor).window(TumblingEventTimeWindows.of(1_000)).max('celsius');
      return peaks.union(peaks).keyBy((r) => r.at).reduce((a, b) => (a.celsius >= b.celsius ? a : b));
    });
    expect(plan.stages.map((stage) => stage.input.kind)).toEqual(['source', 'repartition']);
  });
});

describe('windows in the plan', () => {
  it('sends every element through a repartition topic of one partition, even from a source partitioned by key', () => {
    const plan = pipeline((readings) => readings.windowAll(TumblingEventTimeWindows.of(1_000)).max('celsius'));
    expect(plan.stages).toHaveLength(2);
    const [, windows] = plan.stages;
    expect(windows?.input).toMatchObject({ kind: 'repartition', topic: 'readings-windowAll-repartition', partitions: 1 });
  });

  it('explains the window with its trigger, its evictor and the trigger state they keep', () => {
    const plan = pipeline((readings) =>
      readings.keyBy((r) => r.sensor).window(TumblingEventTimeWindows.of(1_000)).trigger(CountTrigger.of(10)).evictor(TimeEvictor.of(500)).max('celsius'),
    );
    expect(formatPlan(plan)).toContain(`tumbling event-time windows of 1000 ms, CountTrigger(10), TimeEvictor(500), max('celsius') ← keyBy
       state window/windows (value)
       state window/trigger-state (value)`);
  });

  it('refuses a trigger that cannot merge on session windows, naming it', () => {
    const env = StreamExecutionEnvironment.create({ name: 'sessions' });
    const sessions = source(env).keyBy((r) => r.sensor).window(EventTimeSessionWindows.withGap(1_000));
    expect(() => sessions.trigger(DeltaTrigger.of<Reading>(1, (a, b) => b.celsius - a.celsius))).toThrow(
      'DeltaTrigger(1) cannot be used with event-time session windows with a 1000 ms gap: merging windows need a trigger whose canMerge() is true and that has onMerge',
    );
  });
});
