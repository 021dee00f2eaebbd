// The runtime end to end against the real broker and DynamoDB (dynalite): processor,
// coordinator and commit function drive a one-stage and a two-stage pipeline through crashes
// at every step, redeliveries and cut batches; the read_committed output must equal what a
// plain loop computes (test/helpers/runtime-schedule.ts). `npm run chaos` runs more schedules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaAdmin } from '../../../lib/kafka/index.js';
import { startDynamoDbEmulator, type Emulator } from '../../../lib/offline/emulators.js';
import { testBrokers } from '../../helpers/kafka.js';
import { runSchedule, type ScheduleEnvironment } from '../../helpers/runtime-schedule.js';

let dynamo: Emulator;
let environment: ScheduleEnvironment;
beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
  environment = { brokers: testBrokers(), admin: new KafkaAdmin({ brokers: testBrokers() }), dynamo: dynamo.clientOptions };
});
afterAll(async () => {
  await environment.admin.close();
  await dynamo.close();
});

describe('the serverless runtime, exactly once', () => {
  it.each([
    ['one-stage', 11],
    ['one-stage', 12],
    ['one-stage', 13],
    ['two-stage', 21],
    ['two-stage', 22],
  ] as const)(
    '%s pipeline: exact read_committed output through crashes at every step, redeliveries and cut batches (seed %i)',
    async (kind, seed) => {
      const result = await runSchedule(environment, kind, seed);
      expect(result.stages).toBe(kind === 'one-stage' ? 1 : 2);
      expect(result.problems, `seed ${seed}`).toEqual([]);
      expect(Object.values(result.crashes).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
      expect(result.redelivered + result.cut).toBeGreaterThan(0);
    },
    240_000,
  );
});
