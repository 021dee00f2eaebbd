// Two deployments under one pipeline name and stage on one cluster, on the real broker: the one
// that runs first keeps running, the other refuses, with what to do, until the first is gone.
import { afterAll, describe, expect, it } from 'vitest';
import { CommittedRangeReader, createRecordWriter, KafkaAdmin } from '../../../lib/kafka/index.js';
import { DEPLOYMENT_STALE_MS, DeploymentClaim, SecondDeploymentError } from '../../../lib/runtime/deployment-claim.js';
import { minutes } from '../../../lib/api/index.js';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { PipelineRuntime } from '../../../lib/aws/runtime.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';
import { orderTotalsPipeline } from '../../helpers/pipelines.js';
import { inProcessFunctions, useRuntimeEnvironment } from '../../helpers/runtime-environment.js';

const environment = useRuntimeEnvironment();
const admin = new KafkaAdmin({ brokers: testBrokers() });
const reader = new CommittedRangeReader({ brokers: testBrokers() });
const claims: DeploymentClaim[] = [];
afterAll(async () => {
  for (const claim of claims) await claim.close();
  await reader.close();
  await admin.close();
});

const EU = '111111111111:eu-west-1:sluice-orders-prod';
const US = '222222222222:us-east-1:sluice-orders-prod';

function deployments() {
  const plan = { pipeline: uniqueName('claim'), deploymentStage: 'prod' };
  const time = { now: Date.now() };
  const claimOf = (deployment: string) => {
    const claim = new DeploymentClaim({
      plan,
      deployment,
      admin,
      reader,
      writer: () => createRecordWriter('AT_LEAST_ONCE', { brokers: testBrokers() }),
      clock: () => time.now,
    });
    claims.push(claim);
    return claim;
  };
  return { plan, time, claimOf };
}

describe('one deployment per pipeline name and stage on a cluster', () => {
  it('refuses the second, with what to do, until the first has been silent for the stale time', async () => {
    const { plan, time, claimOf } = deployments();
    const eu = claimOf(EU);
    await claimOf(US).check();
    await eu.heartbeat();

    const refusal =
      `Another deployment of pipeline ${plan.pipeline} (stage prod) runs on these brokers: ${EU}, running since ` +
      `${new Date(time.now).toISOString()}, last heard 0 s ago (this is ${US}). Under one pipeline name and stage both would use ` +
      `the same consumer groups, transactional ids and repartition topics, and break each other's exactly-once, so this one ` +
      `processes nothing while that one runs. Remove one of them, or deploy this one under another stage (sluice deploy --stage) ` +
      `or pipeline name. It starts by itself 3 minutes after the other stops.`;
    await expect(claimOf(US).heartbeat()).rejects.toThrow(refusal);
    await expect(claimOf(US).check()).rejects.toThrow(SecondDeploymentError);
    await claimOf(EU).check();

    // The first keeps beating: the second stays refused, however long.
    time.now += 60_000;
    await eu.heartbeat();
    time.now += DEPLOYMENT_STALE_MS - 1_000;
    await expect(claimOf(US).heartbeat()).rejects.toThrow(`runs on these brokers: ${EU}`);
    // Silent past the stale time, the first is taken as gone; come back, it gives way to the second.
    time.now += DEPLOYMENT_STALE_MS;
    await claimOf(US).heartbeat();
    await expect(claimOf(EU).check()).rejects.toThrow(`runs on these brokers: ${US}`);
    await expect(eu.heartbeat()).rejects.toThrow(`runs on these brokers: ${US}`);
  }, 60_000);

  it('lets exactly one of two that start at the same moment run', async () => {
    const { claimOf } = deployments();
    const outcomes = await Promise.allSettled([claimOf(EU).heartbeat(), claimOf(US).heartbeat()]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    await claimOf(EU).check();
    await expect(claimOf(US).check()).rejects.toThrow(`runs on these brokers: ${EU}`);
  }, 60_000);

  it("is what the deployed functions check: the coordinator says it runs, the other deployment's processor refuses", async () => {
    const name = uniqueName('claimed');
    const input = `${name}-orders`;
    await admin.ensureTopics([
      { topic: input, partitions: 1 },
      { topic: `${name}-out`, partitions: 1 },
    ]);
    const runtimeOf = async (deploymentId: string) => {
      const tableName = `${name}-${deploymentId.split(':')[0] ?? ''}`;
      await ensureStateTable(createDocumentClient(environment().dynamo), tableName);
      const runtime = new PipelineRuntime(orderTotalsPipeline({ name, input, brokers: testBrokers(), window: minutes(5) }), {
        tableName,
        kafka: { brokers: testBrokers() },
        dynamodb: environment().dynamo,
        deploymentStage: 'prod',
        deploymentId,
      });
      return { runtime, functions: inProcessFunctions(runtime, Date.now) };
    };
    const eu = await runtimeOf(EU);
    const us = await runtimeOf(US);
    expect((await eu.functions.coordinator()).outcome).toBe('triggered');
    await expect(us.functions.processor({ sluice: 'tick', stageId: 'stage-1', topic: input, partition: 0 })).rejects.toThrow(
      `Another deployment of pipeline ${name} (stage prod) runs on these brokers: ${EU}`,
    );
    await expect(us.functions.coordinator()).rejects.toThrow(SecondDeploymentError);
    expect((await us.runtime.coordinator.get()).triggered).toBe(0);
    await eu.runtime.close();
    await us.runtime.close();
  }, 60_000);
});
