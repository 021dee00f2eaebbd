// `sluice explain` reads the pipeline's topics from the brokers where they answer: what exists,
// how many partitions, and the settings that would delete or refuse its output.
import { afterEach, describe, expect, it } from 'vitest';
import { sluice } from '../../helpers/cli.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const PIPELINE_FILE = 'test/fixtures/pipelines/order-totals-from-environment.ts';
const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
});

// One test: the CLI loads the pipeline file once per process, with the name it then finds.
describe('sluice explain with the brokers in reach', () => {
  it('lists each topic with its settings, names a missing one, warns of a sink whose retention would delete output of old event times, and says when the brokers do not answer', async () => {
    const name = uniqueName('explain');
    Object.assign(process.env, { TEST_PIPELINE_NAME: name, KAFKA_BROKERS: testBrokers().join(','), KAFKA_AUTH: 'NONE' });
    const missing = await sluice('explain', PIPELINE_FILE);
    expect(missing.stdout).toContain(`  ${name}-orders (source): missing\n    warning: it does not exist on the brokers: create it`);

    await environment().admin.ensureTopics([
      { topic: `${name}-orders`, partitions: 2 },
      { topic: `${name}-out`, partitions: 1, configs: { 'retention.ms': String(86_400_000) } },
    ]);
    const explained = await sluice('explain', PIPELINE_FILE);
    expect(explained.code).toBe(0);
    const topics = explained.stdout.slice(explained.stdout.indexOf('Topics on'));
    expect(topics).toContain(`  ${name}-orders (source): 2 partitions\n`);
    expect(topics).toContain(`  ${name}-out (sink): 1 partition, retention 1 day, CreateTime, records up to 1048588 bytes\n`);
    expect(topics).toContain(
      '    warning: its records carry their event time and it deletes records older than 1 day (retention.ms), so a batch whose output is older than 24 h fails',
    );
    expect(topics).toContain('setRecordTimestamp(RecordTimestamp.WRITE_TIME)');

    const json = JSON.parse((await sluice('explain', PIPELINE_FILE, '--json')).stdout) as {
      topics: { settings: { topic: string; role: string; partitions?: number; warnings: string[] }[] };
    };
    expect(json.topics.settings.map(({ topic, role, partitions, warnings }) => ({ topic, role, partitions, warned: warnings.length > 0 }))).toEqual([
      { topic: `${name}-orders`, role: 'source', partitions: 2, warned: false },
      { topic: `${name}-out`, role: 'sink', partitions: 1, warned: true },
    ]);

    process.env.KAFKA_BROKERS = '127.0.0.1:1';
    const unreachable = await sluice('explain', PIPELINE_FILE);
    expect(unreachable.code).toBe(0);
    expect(unreachable.stdout).toMatch(/Topics: not checked, the brokers 127\.0\.0\.1:1 did not answer \(.*ECONNREFUSED.*\)\.\n$/);
  }, 60_000);
});
