// `npm run chaos -- --schedules 2000 [--seed 1] [--minutes 60] [--orders 3000] [--restart-broker] [--restores] [--kinds join,broadcast] [--avro]`:
// runs fault schedules of the serverless runtime (test/helpers/runtime-schedule.ts), taking the
// pipelines of --kinds in turn (one-stage and two-stage unless it says otherwise), against the local broker (or KAFKA_BROKERS), an embedded
// dynalite and s3rver; with --restart-broker, the local broker (the one on KAFKA_BROKERS' port,
// when that is this machine) is killed with SIGKILL and started again twice in each schedule.
// With --avro, orders and totals go in Avro through the schema registry (SCHEMA_REGISTRY_URL, else
// the local one), the orders' schema evolving mid-stream (test/helpers/avro-orders.ts).
// Seeds 2 and 3 of every 4 commit their output per batch (OutputCommit.PER_BATCH), the others at checkpoints.
// With --restores, each schedule takes a savepoint in its third round of deliveries and restores it.
// With --offline-kills, the schedules are process-level instead (test/helpers/offline-kill-schedule.ts):
// `sluice offline` running the seed example is SIGKILLed two to four times at random moments,
// alternately during steady input from a separate producer and during a backlog.
// Stops after the given count or time, prints each failing seed, exits non-zero if any failed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brokersFromEnvironment, KafkaAdmin } from '../../lib/kafka/index.js';
import { startDynamoDbEmulator, startS3Emulator } from '../../lib/offline/emulators.js';
import { acquireBrokers, startLocalBroker, stopLocalBroker } from '../../lib/offline/kafka-broker.js';
import { acquireSchemaRegistry } from '../../lib/offline/schema-registry.js';
import { runOfflineKillSchedule } from '../helpers/offline-kill-schedule.js';
import { SCHEDULE_KINDS } from '../helpers/order-totals-kinds.js';
import { runSchedule, type ScheduleKind } from '../helpers/runtime-schedule.js';

const { values } = parseArgs({
  options: {
    schedules: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    minutes: { type: 'string', default: '60' },
    orders: { type: 'string', default: '3000' },
    'restart-broker': { type: 'boolean', default: false },
    'offline-kills': { type: 'boolean', default: false },
    avro: { type: 'boolean', default: false },
    restores: { type: 'boolean', default: false },
    kinds: { type: 'string', default: 'one-stage,two-stage' },
  },
});
const schedules = Number(values.schedules);
const kinds = values.kinds.split(',').map((kind) => {
  if (!(kind in SCHEDULE_KINDS)) {
    process.stderr.write(`--kinds takes some of ${Object.keys(SCHEDULE_KINDS).join(', ')}, not ${kind}\n`);
    process.exit(2);
  }
  return kind as ScheduleKind;
});
const firstSeed = Number(values.seed);
const deadline = Date.now() + Number(values.minutes) * 60_000;

const { brokers, release } = await acquireBrokers({ fresh: true });
if (values['offline-kills']) {
  await runOfflineKillSchedules();
  await release();
  process.exit();
}

/** The process-level schedules, each on a namespace and a state folder of its own. */
async function runOfflineKillSchedules(): Promise<void> {
  const started = Date.now();
  let ran = 0;
  let failed = 0;
  let kills = 0;
  for (let i = 0; i < schedules && Date.now() < deadline; i++) {
    const seed = firstSeed + i;
    const backlog = i % 2 === 1;
    const stateDir = mkdtempSync(join(tmpdir(), 'sluice-chaos-offline-'));
    ran++;
    try {
      const namespace = `chaos-${seed}-${Date.now().toString(36)}-`;
      const result = await runOfflineKillSchedule({ brokers, seed, namespace, stateDir, orders: Number(values.orders), kills: 2 + (seed % 3), backlog });
      kills += result.kills;
      const where = `${backlog ? 'backlog' : 'steady input'}, ${result.orders} orders, ${result.kills} kills`;
      if (result.problems.length > 0) {
        failed++;
        process.stdout.write(`FAILED seed ${seed} (${where}): ${result.problems.slice(0, 5).join('; ')}\n`);
      } else {
        process.stdout.write(`seed ${seed} (${where}): ${result.windows} windows exactly once\n`);
      }
    } catch (error) {
      failed++;
      process.stdout.write(`FAILED seed ${seed}: ${error instanceof Error ? error.message : String(error)}\n`);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`${kills} SIGKILLs in ${Math.round((Date.now() - started) / 1000)} s\n${ran - failed} passed, ${failed} failed\n`);
  process.exitCode = failed > 0 ? 1 : 0;
}
/**
 * The local broker that --restart-broker kills (SIGKILL) and starts again: the one on
 * KAFKA_BROKERS' port when that names this machine, else Sluice's default one.
 */
function restartableBroker(): { port?: number } {
  const configured = brokersFromEnvironment();
  if (!configured) return {};
  const [host, port] = (configured[0] ?? '').split(':');
  if ((host !== '127.0.0.1' && host !== 'localhost') || !port) {
    process.stderr.write(`--restart-broker restarts a broker on this machine; KAFKA_BROKERS names ${configured.join(',')}\n`);
    process.exit(2);
  }
  return { port: Number(port) };
}
const brokerOptions = values['restart-broker'] ? restartableBroker() : {};
const restartBroker = async () => {
  await stopLocalBroker(brokerOptions, 0);
  await startLocalBroker(brokerOptions);
};
/**
 * Deletes a passed schedule's topics: a broker restart loads every partition it hosts, and
 * with those of a hundred schedules kept a restart took 19 s instead of a few.
 */
async function deleteTopicsOf(namespace: string): Promise<void> {
  try {
    await admin.deleteTopics((await admin.listTopics()).filter((topic) => topic.startsWith(`${namespace}-`)));
  } catch (error) {
    process.stdout.write(`could not delete the topics of ${namespace}: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
const registry = values.avro ? await acquireSchemaRegistry() : undefined;
const scheduleOptions = {
  orders: Number(values.orders),
  ...(values['restart-broker'] ? { restartBroker } : {}),
  ...(registry ? { avroRegistry: registry.url } : {}),
  ...(values.restores ? { restore: true } : {}),
};
let brokerRestarts = 0;
const admin = new KafkaAdmin({ brokers });
const dynamo = await startDynamoDbEmulator();
const s3 = await startS3Emulator();
const crashes: Record<string, number> = {};
let ran = 0;
let failed = 0;
let redelivered = 0;
let cut = 0;
let concurrent = 0;
const dynamoFaults = { throttled: 0, ambiguous: 0 };
const s3Faults = { throttled: 0, ambiguous: 0 };
let checkpoints = 0;
let rollbacks = 0;
const byOutputCommit: Record<string, number> = {};
let restores = 0;
try {
  for (let i = 0; i < schedules && Date.now() < deadline; i++) {
    const seed = firstSeed + i;
    const kind = kinds[i % kinds.length] as ScheduleKind;
    ran++;
    const result = await runSchedule({ brokers, admin, dynamo: dynamo.clientOptions, s3: s3.clientOptions }, kind, seed, scheduleOptions).catch((error: unknown) => {
      failed++;
      process.stdout.write(`FAILED ${kind} seed ${seed}: ${error instanceof Error ? error.message : String(error)}\n`);
      return undefined;
    });
    if (!result) continue;
    // A failing schedule's topics stay, for reading its output and input again.
    if (result.problems.length === 0) await deleteTopicsOf(result.namespace);
    redelivered += result.redelivered;
    cut += result.cut;
    concurrent += result.concurrent;
    dynamoFaults.throttled += result.dynamoFaults.throttled;
    dynamoFaults.ambiguous += result.dynamoFaults.ambiguous;
    s3Faults.throttled += result.s3Faults.throttled;
    s3Faults.ambiguous += result.s3Faults.ambiguous;
    checkpoints += result.checkpoints;
    rollbacks += result.rollbacks;
    byOutputCommit[result.outputCommit] = (byOutputCommit[result.outputCommit] ?? 0) + 1;
    restores += result.restores;
    brokerRestarts += result.brokerRestarts;
    for (const [step, n] of Object.entries(result.crashes)) crashes[step] = (crashes[step] ?? 0) + n;
    if (result.problems.length > 0) {
      failed++;
      process.stdout.write(`FAILED ${kind} ${result.outputCommit} seed ${seed}: ${result.problems.slice(0, 5).join('; ')}\n`);
    } else if (ran % 10 === 0) {
      process.stdout.write(`${ran} schedules, ${failed} failed\n`);
    }
  }
} finally {
  await admin.close();
  await dynamo.close();
  await s3.close();
  await registry?.release();
  await release();
}
process.stdout.write(
  `crashes by step ${JSON.stringify(crashes)}, redelivered batches ${redelivered}, cut batches ${cut}, ` +
    `concurrent runs ${concurrent}, DynamoDB requests throttled ${dynamoFaults.throttled} and answered 503 after ` +
    `succeeding ${dynamoFaults.ambiguous}, S3 requests slowed down ${s3Faults.throttled} and answered 500 after ` +
    `succeeding ${s3Faults.ambiguous}, checkpoint manifests written ${checkpoints}, rollbacks ${rollbacks}, broker restarts ${brokerRestarts}, ` +
    `schedules by output commit ${JSON.stringify(byOutputCommit)}, savepoints restored mid-run ${restores}\n` +
    `${ran - failed} passed, ${failed} failed\n`,
);
process.exitCode = failed > 0 ? 1 : 0;
