// What Lambda does to a function between and during invocations, on the packaged zips under
// Lambda's own runtime (test/helpers/lambda-runtime.ts), against a broker of this file's own that
// closes a connection silent for 3 s (`connections.max.idle.ms`; a cluster's default is 10 min):
// - a freeze between invocations (SIGSTOP) longer than the broker's idle limit and the HTTP
//   keep-alive of DynamoDB's and S3's endpoints, then a thaw (SIGCONT);
// - an invocation that passes its timeout mid-batch, which the runtime kills, and its retry;
// - a container frozen mid-invocation while a second one takes its shard, then thawed (a zombie).
// The read_committed output must equal what a plain loop computes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MSKEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { CommittedRangeReader, createRecordWriter, type KafkaRecord } from '../../../lib/kafka/index.js';
import { startLocalBroker, stopLocalBroker } from '../../../lib/offline/kafka-broker.js';
import { lambdaRecords } from '../../../lib/offline/msk-event.js';
import { consumeTopic, uniqueName } from '../../helpers/kafka-io.js';
import type { EmulatedFunction, InvocationOutcome } from '../../helpers/lambda-runtime.js';
import { closingOrders, expectedTotals, generateOrders } from '../../helpers/orders.js';
import { createPipelineResources, ORDER_TOTALS_FROM_ENVIRONMENT, PackagedPipeline } from '../../helpers/packaged-pipeline.js';
import type { Total } from '../../helpers/pipelines.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { usePackaging } from '../../helpers/serverless-package.js';

const PORT = 19592;
const IDLE_MS = 3_000;
/** Longer than the broker's idle limit and Node's HTTP keep-alive (5 s) of the emulators' endpoints. */
const FREEZE_MS = 7_000;
const PARTITIONS = 2;
const BATCH = 600;
/** The processor's timeout here (the template's is 120 s), so that an invocation frozen mid-batch is killed soon. */
const PROCESSOR_TIMEOUT_S = 5;
/** The coordinator's (the template's is 70 s, and it runs for 55 s of it). */
const COORDINATOR_TIMEOUT_S = 8;

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-idle-broker-'));
let brokers: string[] = [];
beforeAll(async () => {
  brokers = (await startLocalBroker({ port: PORT, stateDir, fresh: true, connectionsMaxIdleMs: IDLE_MS })).brokers;
});
let pipeline: PackagedPipeline | undefined;
afterAll(async () => {
  pipeline?.stop();
  await stopLocalBroker({ port: PORT, stateDir });
  rmSync(stateDir, { recursive: true, force: true });
});
const environment = useRuntimeEnvironment(() => ({ brokers }));
const packageFor = usePackaging();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The input's records in batches of one partition each, in offset order, as the event source mapping sends them. */
async function batchesOf(topic: string): Promise<KafkaRecord[][]> {
  const reader = new CommittedRangeReader({ brokers });
  const [description] = await environment().admin.describeTopics([topic]);
  const perPartition = await Promise.all(
    (description?.partitions ?? []).map((p) => reader.read({ topic, partition: p.partition, from: 0, to: Number(p.stable) })),
  );
  await reader.close();
  const batches: KafkaRecord[][] = [];
  for (let start = 0; perPartition.some((records) => start < records.length); start += BATCH) {
    for (const records of perPartition) if (start < records.length) batches.push(records.slice(start, start + BATCH));
  }
  return batches;
}

const eventOf = (records: KafkaRecord[]): MSKEvent => ({
  eventSource: 'aws:kafka',
  eventSourceArn: 'arn:aws:kafka:us-east-1:123456789012:cluster/test/abc',
  bootstrapServers: brokers.join(','),
  records: lambdaRecords(records),
});

/** Invokes, and freezes the runtime `afterMs` into the invocation: mid-batch, as a batch takes longer. */
async function invokeAndFreeze(fn: EmulatedFunction, event: MSKEvent, afterMs: number): Promise<{ outcome: Promise<InvocationOutcome>; pid: number }> {
  const outcome = fn.invoke(event);
  await sleep(afterMs);
  return { outcome, pid: fn.freeze() };
}

describe('a frozen container', () => {
  it('thaws into a working invocation, is killed at its timeout mid-batch, and loses its shard to a successor while frozen: the output stays exact', async () => {
    const name = uniqueName('frozen');
    const { folder, template } = await packageFor(ORDER_TOTALS_FROM_ENVIRONMENT, 'msk', { TEST_PIPELINE_NAME: name });
    const { dynamo, s3 } = environment();
    await createPipelineResources(name, environment(), PARTITIONS);
    const orders = generateOrders({ count: 5_000, seed: 21, categories: 4, lateFraction: 0 });
    const writer = createRecordWriter('AT_LEAST_ONCE', { brokers });
    await writer.write(
      [...orders, ...closingOrders(orders, PARTITIONS)].map(({ late: _late, ...o }) => ({ topic: `${name}-orders`, key: o.category, value: JSON.stringify(o) })),
    );
    await writer.close();
    const batches = await batchesOf(`${name}-orders`);
    expect(batches.length).toBeGreaterThanOrEqual(10);

    pipeline = await PackagedPipeline.start({
      name,
      folder,
      template,
      brokers,
      dynamo,
      s3,
      python: inject('pythonTools').python,
      timeoutsSeconds: { processorstage1: PROCESSOR_TIMEOUT_S, coordinator: COORDINATOR_TIMEOUT_S },
    });
    const processor = pipeline.function('processorstage1');
    const next = () => {
      const batch = batches.shift();
      if (!batch) throw new Error('no batches left');
      return eventOf(batch);
    };
    const expectOk = (outcome: InvocationOutcome, what: string) => expect(outcome, `${what}\n${processor.logs.slice(-3_000)}`).toMatchObject({ ok: true });

    // INIT, then warm.
    const first = await processor.invoke(next());
    expectOk(first, 'the first batch');
    console.log(`under the emulator: INIT ${processor.initDurationsMs().map((ms) => ms.toFixed(0)).join(', ')} ms; the first invocation, INIT and batch, ${first.ms.toFixed(0)} ms`);
    const warm = await processor.invoke(next());
    expectOk(warm, 'a warm batch');

    // Frozen between invocations past the broker's idle limit: its connections are closed under it.
    const between = processor.freeze();
    await sleep(FREEZE_MS);
    processor.thaw(between);
    const thawed = await processor.invoke(next());
    expectOk(thawed, 'the batch after a thaw');
    console.log(`thaw: a warm batch took ${warm.ms.toFixed(0)} ms, the first after a ${FREEZE_MS} ms freeze ${thawed.ms.toFixed(0)} ms`);

    // Frozen mid-batch until the runtime kills it at its timeout; the mapping retries the batch.
    const retried = next();
    const killed = await invokeAndFreeze(processor, retried, 10);
    const timedOut = await killed.outcome;
    expect(timedOut).toMatchObject({ ok: false, timedOut: true });
    expectOk(await processor.invoke(retried), 'the retry of the batch that timed out');
    expect(processor.initDurationsMs()).toHaveLength(2);

    // Frozen mid-batch while a second container takes the same batch and the shard; then thawed.
    const contested = next();
    const zombie = await invokeAndFreeze(processor, contested, 10);
    const successor = await pipeline.anotherInstance('processorstage1');
    expectOk(await successor.invoke(contested), 'the successor’s batch');
    expectOk(await successor.invoke(next()), 'the successor’s next batch');
    processor.thaw(zombie.pid);
    const zombieOutcome = await zombie.outcome;
    for (const batch of batches.splice(0)) expectOk(await successor.invoke(eventOf(batch)), 'a later batch');

    // The coordinator, again and again, completes checkpoints and has the commit function commit them.
    const coordinator = pipeline.function('coordinator');
    const expected = expectedTotals(orders, minutes(5));
    const scheduling = { on: true };
    const scheduled = () => scheduling.on;
    const schedule = (async () => {
      while (scheduled()) await coordinator.invoke({ source: 'aws.events' });
    })();
    try {
      const consumed = await consumeTopic(`${name}-out`, { brokers, expected: expected.size, timeoutMs: 90_000, settleMs: 2_000 });
      const totals = consumed.map((message) => JSON.parse(message.value ?? '') as Total);
      expect(new Map(totals.map((t) => [`${t.category}@${t.windowStart}`, t.amount])), pipeline.logs()).toEqual(expected);
      expect(totals).toHaveLength(expected.size);
    } finally {
      scheduling.on = false;
      await schedule;
      await Promise.all(pipeline.invocations);
    }
    console.log(`the zombie's invocation ended ${zombieOutcome.ok ? 'without error' : `with: ${zombieOutcome.error.slice(0, 200)}`}`);
  }, 300_000);
});
