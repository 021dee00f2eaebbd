// What ships is what is tested: `sluice deploy --package-only` builds the zips, and each function is
// unzipped and run by Lambda's own runtime, AWS's Runtime Interface Emulator and Node.js Runtime
// Interface Client (test/helpers/lambda-runtime.ts), with the template's handler, environment,
// memory and timeout, and the emulators' endpoints and the local broker in place of AWS's. MSK events from the emulated event source mapping go to the processor, the
// coordinator runs on a schedule with Lambda's remaining time, and the functions invoke each
// other through a stand-in for Lambda's Invoke API; the read_committed output must be exact.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createRecordWriter } from '../../../lib/kafka/index.js';
import { EventSourceMapping } from '../../../lib/offline/event-source-mapping.js';
import { consumeAll, testBrokers, uniqueName } from '../../helpers/kafka.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import type { Total } from '../../helpers/pipelines.js';
import { createPipelineResources, ORDER_TOTALS_FROM_ENVIRONMENT, PackagedPipeline, resultOf } from '../../helpers/packaged-pipeline.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { usePackaging } from '../../helpers/serverless-package.js';

const environment = useRuntimeEnvironment();
const packageFor = usePackaging();
const PARTITIONS = 2;

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let pipeline: PackagedPipeline | undefined;
afterAll(() => pipeline?.stop());

describe('the packaged functions', () => {
  it('run from their zips as Lambda runs them, and give exact read_committed output', async () => {
    const name = uniqueName('packaged');
    const { folder, template } = await packageFor(ORDER_TOTALS_FROM_ENVIRONMENT, 'msk', { TEST_PIPELINE_NAME: name });
    const { dynamo, s3 } = environment();
    await createPipelineResources(name, environment(), PARTITIONS);

    pipeline = await PackagedPipeline.start({ name, folder, template, brokers: testBrokers(), dynamo, s3, python: inject('pythonTools').python });
    const { functions, invocations, invocationErrors, invoked, scheduleCalls } = pipeline;
    expect([...functions.keys()].sort()).toEqual(['commit', 'coordinator', 'processorstage1']);

    const orders = generateOrders({ count: 1_500, seed: 12, categories: 4, lateFraction: 0 });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
    await writer.write(
      [...orders, ...closingOrders(orders, PARTITIONS)].map(({ late: _late, ...o }) => ({ topic: `${name}-orders`, key: o.category, value: JSON.stringify(o) })),
    );
    await writer.close();

    const [processor, coordinator] = [pipeline.function('processorstage1'), pipeline.function('coordinator')];
    const batchErrors: string[] = [];
    const mapping = new EventSourceMapping({
      kafka: { brokers: testBrokers() },
      topic: `${name}-orders`,
      partitions: Array.from({ length: PARTITIONS }, (_, p) => p),
      groupId: name,
      batchSize: 500,
      handler: async (event) => resultOf(await processor.invoke(event)),
      onError: (error) => batchErrors.push(String(error)),
    });
    await mapping.start();
    // The schedule: the coordinator again as soon as an invocation ends (each runs for most of its timeout).
    const scheduling = { on: true };
    const scheduled = () => scheduling.on;
    let coordinatorRuns = 0;
    const schedule = (async () => {
      while (scheduled()) {
        const outcome = await coordinator.invoke({ source: 'aws.events' }).catch((error: unknown) => ({ ok: false as const, error: String(error) }));
        if (!outcome.ok && scheduled()) invocationErrors.push(outcome.error);
        coordinatorRuns += 1;
      }
    })();
    const expected = expectedTotals(orders, minutes(5));
    try {
      const consumed = await consumeAll(`${name}-out`, { expected: expected.size, timeoutMs: 120_000, settleMs: 2_000 });
      const totals = consumed.map((message) => JSON.parse(message.value ?? '') as Total);
      expect(new Map(totals.map((t) => [`${t.category}@${t.windowStart}`, t.amount]))).toEqual(expected);
      expect(totals).toHaveLength(expected.size);

      // A record that is not JSON and holds a card number fails its batch (the default policy):
      // the error names the record, and neither it nor any log line quotes the record.
      const card = '4111-1111-1111-1111';
      const bad = createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() });
      await bad.write([{ topic: `${name}-orders`, partition: 0, key: 'category-0', value: `card=${card}` }]);
      await bad.close();
      await until(() => batchErrors.length >= 2, 60_000);
      expect(batchErrors[0]).toMatch(new RegExp(`Record ${name}-orders/0@\\d+: orders failed: the value \\(24 bytes\\) is not valid JSON\\.`));
      expect(processor.logs).toContain('is not valid JSON');
      expect([...batchErrors, ...[...functions.values()].map((fn) => fn.logs)].filter((text) => text.includes(card))).toEqual([]);
    } finally {
      // One coordinator invocation runs to its end (55 s of its 70 s timeout); the next would run
      // on for most of a minute, so its container is ended, as Lambda may end one.
      await until(() => coordinatorRuns > 0, 70_000);
      scheduling.on = false;
      coordinator.stop();
      await schedule;
      await mapping.stop();
      await Promise.all(invocations);
    }
    // The coordinator reached the commit function through Lambda's Invoke API, by the name the template gives it.
    expect([...invoked]).toContain(`sluice-${name}-dev-commit`);
    // Awake, each coordinator invocation keeps its rule on (it turns it off only at rest).
    expect(scheduleCalls).toContain('EnableRule');
    // Ticks of the shard stuck at the bad record fail as its batches do; nothing else fails.
    const unexpected = invocationErrors.filter((error) => !error.includes('is not valid JSON'));
    expect(unexpected, pipeline.logs()).toEqual([]);
  }, 300_000);
});
