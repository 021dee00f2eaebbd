// The broker (from the test run), an embedded dynalite and s3rver, for the runtime's integration tests.
import { afterAll, beforeAll } from 'vitest';
import { commitHandler, coordinatorHandler, processorHandler } from '../../lib/aws/handlers.js';
import type { PipelineRuntime } from '../../lib/aws/runtime.js';
import { KafkaAdmin, type KafkaConnectionOptions } from '../../lib/kafka/index.js';
import { startDynamoDbEmulator, startS3Emulator, type Emulator } from '../../lib/offline/emulators.js';
import { testBrokers } from './kafka.js';
import type { ScheduleEnvironment } from './runtime-schedule.js';

/**
 * Starts dynalite, s3rver and an admin client before the file's tests and closes both after; call
 * at top level. `kafka` names another broker than the test run's, read once the hooks before
 * this call's have run, and the connection the runtime uses there (another listener, say).
 */
export function useRuntimeEnvironment(
  kafka: () => { brokers: string[]; runtimeKafka?: KafkaConnectionOptions } = () => ({ brokers: testBrokers() }),
): () => ScheduleEnvironment {
  let dynamo: Emulator | undefined;
  let s3: Emulator | undefined;
  let environment: ScheduleEnvironment | undefined;
  beforeAll(async () => {
    dynamo = await startDynamoDbEmulator();
    s3 = await startS3Emulator();
    const { brokers, runtimeKafka } = kafka();
    environment = {
      brokers,
      ...(runtimeKafka ? { runtimeKafka } : {}),
      admin: new KafkaAdmin({ brokers }),
      dynamo: dynamo.clientOptions,
      s3: s3.clientOptions,
    };
  });
  afterAll(async () => {
    await environment?.admin.close();
    await dynamo?.close();
    await s3?.close();
  });
  return () => {
    if (!environment) throw new Error('useRuntimeEnvironment() is ready only inside tests');
    return environment;
  };
}

/**
 * A one-stage pipeline's functions in this process: the coordinator's ticks run the processor,
 * and its commits the commit function, unless `startsCommit` is false (a test then commits by hand).
 */
export function inProcessFunctions(runtime: PipelineRuntime, clock: () => number, { startsCommit = true } = {}) {
  const processor = processorHandler(runtime, 'stage-1');
  const commit = commitHandler(runtime);
  const coordinator = coordinatorHandler(
    runtime,
    async (target) => {
      await processor({ sluice: 'tick', ...target });
    },
    async () => {
      if (startsCommit) await commit();
    },
    clock,
  );
  return { processor, commit, coordinator };
}
