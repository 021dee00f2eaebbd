import { describe, expect, it } from 'vitest';
import {
  BadRecordPolicy,
  JsonDeserializationSchema,
  JsonSerializationSchema,
  KafkaRecordSerializationSchema,
  KafkaSink,
  KafkaSource,
  SimpleStringSchema,
  StreamExecutionEnvironment,
  WatermarkStrategy,
  type BadRecordPolicy as Policy,
} from '../../../lib/api/index.js';
import { BadRecordError } from '../../../lib/runtime/stage-executor.js';
import { PipelineTestHarness } from '../../../lib/testing/index.js';

interface Payment {
  id: string;
  cents: number;
}

function payments(policy?: Policy, configure: (env: StreamExecutionEnvironment) => void = () => undefined) {
  const env = StreamExecutionEnvironment.create({ name: 'payments' });
  if (policy) env.setBadRecordPolicy(policy);
  configure(env);
  env
    .fromSource(
      KafkaSource.builder<Payment>()
        .setBootstrapServers('127.0.0.1:9092')
        .setTopics('payments')
        .setGroupId('payments')
        .setValueOnlyDeserializer(
          new JsonDeserializationSchema<Payment>((value) => {
            const payment = value as Payment;
            if (typeof payment.cents !== 'number') throw new Error('cents must be a number');
            return payment;
          }),
        )
        .build(),
      WatermarkStrategy.noWatermarks(),
      'payments',
    )
    .map((payment) => {
      if (payment.cents < 0) throw new Error(`negative amount ${payment.cents}`);
      return { ...payment, euros: payment.cents / 100 };
    })
    .name('to-euros')
    .sinkTo(
      KafkaSink.builder<Payment & { euros: number }>()
        .setBootstrapServers('127.0.0.1:9092')
        .setRecordSerializer(
          KafkaRecordSerializationSchema.builder<Payment & { euros: number }>()
            .setTopic('euros')
            .setValueSerializationSchema(new JsonSerializationSchema())
            .build(),
        )
        .build(),
    );
  return new PipelineTestHarness(env);
}

const input = [
  { value: '{"id":"p1","cents":150}', partition: 2 },
  { value: 'not json', partition: 2, key: 'k', headers: [{ key: 'trace', value: Buffer.from('t-1') }] },
  { value: '{"id":"p3","cents":-5}', partition: 2 },
  { value: '{"id":"p4","cents":"7"}', partition: 2 },
  { value: '{"id":"p5","cents":25}', partition: 2 },
];

describe('bad records', () => {
  it('fail the batch by default, naming topic, partition, offset, the failing step and the fix', () => {
    const harness = payments();
    const error = (() => {
      try {
        harness.send('payments', input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(BadRecordError);
    expect((error as BadRecordError).message).toBe(
      `Record payments/2@1: payments failed: the value (8 bytes) is not valid JSON. Fix the record or the function, or set ` +
        `env.setBadRecordPolicy(BadRecordPolicy.skip()) or BadRecordPolicy.deadLetter('topic') to go on without it.`,
    );
    expect((error as BadRecordError).record).toMatchObject({ topic: 'payments', partition: 2, offset: 1 });
  });

  it('name the user function that threw', () => {
    const harness = payments();
    expect(() => harness.send('payments', [input[2] ?? { value: null }])).toThrow(/^Record payments\/2@0: to-euros failed: negative amount -5\./);
  });

  it('are skipped and counted with BadRecordPolicy.skip()', () => {
    const harness = payments(BadRecordPolicy.skip());
    harness.send('payments', input);
    expect(harness.outputValues('euros').map((v) => (JSON.parse(v) as Payment).id)).toEqual(['p1', 'p5']);
    expect(harness.metrics()).toMatchObject({ recordsIn: 5, badRecordsSkipped: 3, recordsOut: 2 });
  });

  it('go to a dead-letter topic as they were, with the error in headers', () => {
    const harness = payments(BadRecordPolicy.deadLetter('payments-dlq'));
    harness.send('payments', input);
    expect(harness.outputValues('euros')).toHaveLength(2);
    const dead = harness.deadLetterRecords();
    expect(dead.map((r) => r.value?.toString())).toEqual(['not json', '{"id":"p3","cents":-5}', '{"id":"p4","cents":"7"}']);
    expect(dead.every((r) => r.topic === 'payments-dlq')).toBe(true);
    const headers = Object.fromEntries((dead[1]?.headers ?? []).map((h) => [h.key, h.value.toString()]));
    expect(headers).toEqual({
      'sluice.error': 'negative amount -5',
      'sluice.error.operator': 'to-euros',
      'sluice.source.topic': 'payments',
      'sluice.source.partition': '2',
      'sluice.source.offset': '2',
    });
    expect(dead[0]?.key?.toString()).toBe('k');
    expect(dead[0]?.headers?.[0]).toEqual({ key: 'trace', value: Buffer.from('t-1') });
    expect(harness.metrics().badRecordsDeadLettered).toBe(3);
  });
});

describe('event times far ahead of processing time', () => {
  it('are bad records with env.setMaxEventTimeAhead, and allowed without it', () => {
    const minute = 60_000;
    const records = [
      { value: '{"id":"p1","cents":1}', partition: 0, timestamp: 5 * minute },
      { value: '{"id":"p2","cents":2}', partition: 0, timestamp: 20 * minute },
    ];
    const harness = payments(BadRecordPolicy.deadLetter('payments-dlq'), (env) => env.setMaxEventTimeAhead(10 * minute));
    harness.send('payments', records);
    expect(harness.outputValues('euros').map((v) => (JSON.parse(v) as Payment).id)).toEqual(['p1']);
    expect(harness.deadLetterRecords()[0]?.headers?.find((h) => h.key === 'sluice.error')?.value).toBe(
      'its event time 1970-01-01T00:20:00.000Z is 1200000 ms ahead of processing time, more than the 600000 ms that env.setMaxEventTimeAhead allows',
    );
    expect(payments().send('payments', records).outputValues('euros')).toHaveLength(2);
  });
});

describe('record contents in errors', () => {
  // JSON.parse's own message quotes this text.
  const secret = 'card=4111-1111-1111-1111';

  function failure(harness: PipelineTestHarness, value: string): BadRecordError {
    try {
      harness.send('payments', [{ value, partition: 0 }]);
    } catch (error) {
      return error as BadRecordError;
    }
    throw new Error('the record did not fail');
  }

  it('stay out of the error, its cause and the dead letter header by default', () => {
    const error = failure(payments(), secret);
    expect(error.message).toMatch(/^Record payments\/0@0: payments failed: the value \(24 bytes\) is not valid JSON\./);
    expect(error.cause).toBeUndefined();
    const harness = payments(BadRecordPolicy.deadLetter('payments-dlq'));
    harness.send('payments', [{ value: secret, partition: 0 }]);
    const [dead] = harness.deadLetterRecords();
    expect(dead?.value?.toString()).toBe(secret);
    const headers = (dead?.headers ?? []).map((h) => h.value.toString());
    expect(headers.some((value) => value.includes('4111'))).toBe(false);
    expect(headers).toContain('the value (24 bytes) is not valid JSON');
  });

  it("are taken out of a function's message where the record's value appears whole", () => {
    const env = StreamExecutionEnvironment.create({ name: 'echo' });
    env
      .fromSource(
        KafkaSource.builder<string>().setBootstrapServers('127.0.0.1:9092').setTopics('in').setGroupId('echo').setValueOnlyDeserializer(new SimpleStringSchema()).build(),
        WatermarkStrategy.noWatermarks(),
        'in',
      )
      .map((text) => {
        throw new Error(`cannot handle ${text} here`);
      })
      .name('reject')
      .sinkTo(
        KafkaSink.builder<string>()
          .setBootstrapServers('127.0.0.1:9092')
          .setRecordSerializer(KafkaRecordSerializationSchema.builder<string>().setTopic('out').setValueSerializationSchema(new SimpleStringSchema()).build())
          .build(),
      );
    expect(() => new PipelineTestHarness(env).send('in', [{ value: 'card 4111-1111' }])).toThrow(
      /^Record in\/0@0: reject failed: cannot handle <the record's value> here\./,
    );
  });

  it('are shown with env.setRecordContentsInErrors(true), for debugging', () => {
    const error = failure(payments(undefined, (env) => env.setRecordContentsInErrors(true)), secret);
    expect(jsonError(secret)).toContain('4111');
    expect(error.message).toContain(`the value (24 bytes) is not valid JSON: ${jsonError(secret)}`);
    expect(error.cause).toBeInstanceOf(Error);
  });
});

function jsonError(text = 'not json'): string {
  try {
    JSON.parse(text);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

/** Payments keyed by id through a repartition topic (Kafka's default max.message.bytes), summed per id. */
function repartitioned(policy: Policy) {
  const env = StreamExecutionEnvironment.create({ name: 'notes' });
  env.setBadRecordPolicy(policy);
  env
    .fromSource(
      KafkaSource.builder<Payment & { note: string }>()
        .setBootstrapServers('127.0.0.1:9092')
        .setTopics('payments')
        .setGroupId('notes')
        .setValueOnlyDeserializer(new JsonDeserializationSchema<Payment & { note: string }>())
        .build(),
      WatermarkStrategy.noWatermarks(),
      'payments',
    )
    .keyBy((payment) => payment.id)
    .sum('cents')
    .map((payment) => {
      if (payment.cents < 0) throw new Error(`negative total ${payment.cents}`);
      return { id: payment.id, cents: payment.cents };
    })
    .name('check-total')
    .sinkTo(
      KafkaSink.builder<Payment>()
        .setBootstrapServers('127.0.0.1:9092')
        .setRecordSerializer(KafkaRecordSerializationSchema.builder<Payment>().setTopic('totals').setValueSerializationSchema(new JsonSerializationSchema()).build())
        .build(),
    );
  return new PipelineTestHarness(env);
}
describe('records too large for the topic they go to', () => {
  const note = (id: string, cents: number, bytes: number) => ({ value: JSON.stringify({ id, cents, note: 'x'.repeat(bytes) }), partition: 0 });
  const records = [note('p1', 1, 10), note('p1', 2, 1_500_000), note('p1', 4, 10)];

  it('fail the input record that produced them, naming it, the topic, the size and the fix', () => {
    expect(() => repartitioned(BadRecordPolicy.fail()).send('payments', records)).toThrow(
      /^Record payments\/0@1: keyBy failed: an output record for notes-keyBy-repartition takes \d+ bytes, more than the topic's max\.message\.bytes of 1048588: make the record smaller, or raise max\.message\.bytes/,
    );
  });

  it('go to the dead letters under deadLetter(), and the rest goes on', () => {
    const harness = repartitioned(BadRecordPolicy.deadLetter('payments-dlq')).send('payments', records);
    expect(harness.deadLetterRecords().map((r) => r.headers?.find((h) => h.key === 'sluice.source.offset')?.value.toString())).toEqual(['1']);
    expect(harness.outputValues('totals').map((v) => (JSON.parse(v) as Payment).cents)).toEqual([1, 5]);
  });
});

describe('a dead letter of a stage after a repartition', () => {
  it('names the source record it came from, and the repartition record that failed', () => {
    const harness = repartitioned(BadRecordPolicy.deadLetter('payments-dlq')).send('payments', [
      { value: JSON.stringify({ id: 'p2', cents: 5, note: '' }), partition: 3 },
      { value: JSON.stringify({ id: 'p9', cents: -3, note: '' }), partition: 3 },
    ]);
    const [dead] = harness.deadLetterRecords();
    expect(Object.fromEntries((dead?.headers ?? []).map((h) => [h.key, h.value.toString()]))).toEqual({
      'sluice.error': 'negative total -3',
      'sluice.error.operator': 'check-total',
      'sluice.source.topic': 'payments',
      'sluice.source.partition': '3',
      'sluice.source.offset': '1',
      'sluice.repartition.topic': 'notes-keyBy-repartition',
      'sluice.repartition.partition': '0',
      'sluice.repartition.offset': '1',
    });
  });
});

describe('event times that are not whole milliseconds', () => {
  it('are bad records at the source, named there, not in a later stage', () => {
    const env = StreamExecutionEnvironment.create({ name: 'times' });
    env.setBadRecordPolicy(BadRecordPolicy.deadLetter('times-dlq'));
    env
      .fromSource(
        KafkaSource.builder<{ id: string; at: number }>()
          .setBootstrapServers('127.0.0.1:9092')
          .setTopics('events')
          .setGroupId('times')
          .setValueOnlyDeserializer(new JsonDeserializationSchema<{ id: string; at: number }>())
          .build(),
        WatermarkStrategy.forMonotonousTimestamps<{ id: string; at: number }>().withTimestampAssigner((event) => event.at),
        'events',
      )
      .keyBy((event) => event.id)
      .sum('at')
      .sinkTo(
        KafkaSink.builder<{ id: string; at: number }>()
          .setBootstrapServers('127.0.0.1:9092')
          .setRecordSerializer(KafkaRecordSerializationSchema.builder<{ id: string; at: number }>().setTopic('sums').setValueSerializationSchema(new JsonSerializationSchema()).build())
          .build(),
      );
    // 1e400 parses as Infinity; 1.5 is no whole millisecond.
    const harness = new PipelineTestHarness(env).send('events', [
      { value: '{"id":"a","at":1e400}', partition: 0 },
      { value: '{"id":"a","at":1.5}', partition: 0 },
      { value: '{"id":"a","at":1000}', partition: 0 },
    ]);
    expect(harness.deadLetterRecords().map((r) => [r.headers?.find((h) => h.key === 'sluice.source.offset')?.value.toString(), r.headers?.find((h) => h.key === 'sluice.error')?.value.toString()])).toEqual([
      ['0', 'its event time Infinity is not a whole number of milliseconds'],
      ['1', 'its event time 1.5 is not a whole number of milliseconds'],
    ]);
    expect(harness.outputValues('sums')).toEqual(['{"id":"a","at":1000}']);
  });
});
