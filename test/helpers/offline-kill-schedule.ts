// A process-level fault schedule of the seed example as a user runs it: orders without a key
// from a producer of their own, and `sluice offline` killed with SIGKILL at seeded random
// moments — while the orders arrive (steady input), or while it works through all of them at
// once (a backlog). Then, with one closing order per partition, a last run must write the
// 5-minute totals of every order in the topic under read_committed: nothing lost, nothing twice.
// For `npm test` (seed-unkeyed-kill.test.ts) and `npm run chaos -- --offline-kills N`.
import { spawn } from 'node:child_process';
import { WINDOW_SIZE, type Order, type OrderAggregate } from '../../examples/order-aggregation.js';
import { createRecordWriter } from '../../lib/kafka/index.js';
import { consumeTopic } from './kafka-io.js';
import { compareOutput } from './order-totals-kinds.js';
import { exitCode, readTopicValues, startOffline, type OfflineProcess } from './offline-process.js';
import { expectedTotals, seededRandom } from './orders.js';

export interface OfflineKillSchedule {
  readonly brokers: readonly string[];
  readonly seed: number;
  /** Prefixes every topic and group of the example, so that schedules never share one. */
  readonly namespace: string;
  readonly stateDir: string;
  readonly orders: number;
  readonly kills: number;
  /** All orders are written before the pipeline runs; otherwise they arrive over the kills. */
  readonly backlog: boolean;
}

export interface OfflineKillResult {
  /** Every way the output differs from the totals of the input; empty when exactly once held. */
  readonly problems: string[];
  readonly kills: number;
  readonly orders: number;
  readonly windows: number;
}

const PRODUCER = 'test/fixtures/scripts/produce-unkeyed-orders.ts';
const PIPELINE = 'examples/order-aggregation.ts';
const PARTITIONS = 4;
/** How long steady input lasts: about the time the kills take. */
const STEADY_INPUT_MS = 20_000;

async function waitForOutput(offline: OfflineProcess, text: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!offline.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`sluice offline did not print "${text}" within ${ms} ms:\n${offline.output().slice(-4_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runOfflineKillSchedule(schedule: OfflineKillSchedule): Promise<OfflineKillResult> {
  const { brokers, namespace, stateDir } = schedule;
  const random = seededRandom(schedule.seed);
  const env = { ORDER_AGGREGATION_NAMESPACE: namespace };
  const start = async (seconds: number) => {
    const offline = startOffline(brokers, PIPELINE, ['--no-generate', '--state-dir', stateDir, '--for', String(seconds)], env);
    await waitForOutput(offline, 'Running', 60_000);
    return offline;
  };
  const produce = (perSecond: number) => {
    const args = [PRODUCER, brokers.join(','), `${namespace}orders`, String(schedule.orders), String(perSecond), String(schedule.seed)];
    const producer = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    return new Promise<number | null>((resolve) => producer.once('exit', resolve));
  };

  // The first run creates the topics, so that the producer finds `orders` with its partitions.
  let offline = await start(120);
  let produced: Promise<number | null>;
  if (schedule.backlog) {
    offline.child.kill('SIGTERM');
    await exitCode(offline, 30_000);
    if ((await produce(50_000)) !== 0) throw new Error('The order producer failed');
    produced = Promise.resolve(0);
    offline = await start(120);
  } else {
    produced = produce(Math.max(10, Math.ceil((schedule.orders * 1_000) / STEADY_INPUT_MS)));
  }
  let kills = 0;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2_000 + random() * 6_000));
    offline.child.kill('SIGKILL');
    await exitCode(offline, 10_000);
    if (++kills === schedule.kills) break;
    offline = await start(120);
  }
  if ((await produced) !== 0) throw new Error('The order producer failed');

  const orders = await readTopicValues<Order>(brokers, `${namespace}orders`);
  // One order worth nothing, an hour later, on every partition: every window closes.
  const closingAt = Math.max(...orders.map((order) => order.timestamp)) + 3_600_000;
  const writer = createRecordWriter('AT_LEAST_ONCE', { brokers: [...brokers] });
  await writer.write(
    Array.from({ length: PARTITIONS }, (_, partition) => ({
      topic: `${namespace}orders`,
      partition,
      value: JSON.stringify({ orderId: `closing-${partition}`, category: 'closing', amount: 0, timestamp: closingAt }),
    })),
  );
  await writer.flush();
  await writer.close();

  const expected = expectedTotals(
    orders.map((order) => ({ ...order, late: false })),
    WINDOW_SIZE,
  );
  const last = await start(180);
  const consumed = await consumeTopic(`${namespace}order-aggregates`, { brokers, expected: expected.size, timeoutMs: 150_000, settleMs: 3_000 });
  last.child.kill('SIGTERM');
  const problems: string[] = [];
  const code = await exitCode(last, 30_000);
  if (code !== 0) problems.push(`the last run exited with ${code}:\n${last.output().slice(-2_000)}`);

  // Its totals are keyed as the one-stage schedules' are: by category and window start.
  const aggregates = consumed.map((message) => JSON.parse(message.value ?? '') as OrderAggregate);
  problems.push(...compareOutput('one-stage', aggregates, expected));
  return { problems, kills, orders: orders.length, windows: expected.size };
}
