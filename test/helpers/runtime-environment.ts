// The broker (from the test run) and an embedded dynalite, for the runtime's integration tests.
import { afterAll, beforeAll } from 'vitest';
import { KafkaAdmin } from '../../lib/kafka/index.js';
import { startDynamoDbEmulator, type Emulator } from '../../lib/offline/emulators.js';
import { testBrokers } from './kafka.js';
import type { ScheduleEnvironment } from './runtime-schedule.js';

/** Starts dynalite and an admin client before the file's tests and closes both after; call at top level. */
export function useRuntimeEnvironment(): () => ScheduleEnvironment {
  let dynamo: Emulator | undefined;
  let environment: ScheduleEnvironment | undefined;
  beforeAll(async () => {
    dynamo = await startDynamoDbEmulator();
    environment = { brokers: testBrokers(), admin: new KafkaAdmin({ brokers: testBrokers() }), dynamo: dynamo.clientOptions };
  });
  afterAll(async () => {
    await environment?.admin.close();
    await dynamo?.close();
  });
  return () => {
    if (!environment) throw new Error('useRuntimeEnvironment() is ready only inside tests');
    return environment;
  };
}
