// The Lambda handlers over the runtime, fed Lambda-shaped Kafka events, against the real
// broker and dynalite — including a partition that never receives a record.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { coordinatorHandler, processorHandler } from '../../../lib/aws/handlers.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { runHandlersOverEvents } from '../../helpers/handler-run.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';

const environment = useRuntimeEnvironment();

describe('the Lambda handlers', () => {
  it('process MSK and self-managed events, tick an idle partition, and commit exactly the expected totals', async () => {
    await runHandlersOverEvents({
      brokers: testBrokers(),
      runtimeKafka: { brokers: testBrokers() },
      dynamo: environment().dynamo,
      events: ['aws:kafka', 'SelfManagedKafka'],
    });
  }, 120_000);

  it('start by checking that every topic the pipeline names exists, and name the missing one', async () => {
    const name = uniqueName('missing');
    const input = `${name}-orders`;
    await environment().admin.ensureTopics([{ topic: input, partitions: 1 }]);
    await ensureStateTable(createDocumentClient(environment().dynamo), name);
    const runtime = new PipelineRuntime(orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }), {
      tableName: name,
      kafka: { brokers: testBrokers() },
      dynamodb: environment().dynamo,
    });
    const coordinator = coordinatorHandler(runtime, () => Promise.resolve(), () => Promise.resolve());
    await expect(coordinator()).rejects.toThrow(
      `Topic ${name}-out does not exist on the brokers. Create it (kafka-topics.sh --create --topic <name> --partitions <n>), or fix the name in the pipeline.`,
    );
    expect((await runtime.coordinator.get()).triggered).toBe(0);
    await environment().admin.ensureTopics([{ topic: `${name}-out`, partitions: 1 }]);
    expect((await coordinator()).outcome).toBe('triggered');
    await runtime.close();
  });

  it('refuses a stage the pipeline does not have', () => {
    const runtime = new PipelineRuntime(
      orderTotalsPipeline({ name: 'no-such-stage', input: 'in', brokers: testBrokers(), window: minutes(1) }),
      { tableName: 'unused', kafka: { brokers: testBrokers() }, dynamodb: environment().dynamo },
    );
    expect(() => processorHandler(runtime, 'stage-7')).toThrow('Pipeline no-such-stage has no stage-7; its stages are stage-1');
  });
});
