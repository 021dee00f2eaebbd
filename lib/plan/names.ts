import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import type { Plan, Stage } from './plan.js';

/**
 * The names a pipeline takes on the brokers, worked out in one place for the planner, the
 * processor, offline mode and the deployment. A deployed pipeline's names carry its deployment
 * stage (`sluice deploy --stage`), so that dev and prod on one cluster share no consumer group,
 * no transactional id and no repartition topic: sharing them would split the input between the
 * two, fence each other's transactions, and mix their shuffled records. Offline mode and the
 * tests have no deployment stage, and their names have none.
 */

/** Deployment stages as the serverless CLI takes them; they become part of topic and group names. */
const DEPLOYMENT_STAGE = /^[A-Za-z0-9-]{1,32}$/;

/** Checks a deployment stage, for a plan and for the environment variable that names it. */
export function validDeploymentStage(stage: string): string {
  if (!DEPLOYMENT_STAGE.test(stage)) {
    throw new Error(`The deployment stage "${stage}" must be 1 to 32 letters, digits or dashes: it becomes part of topic, group and transactional-id names`);
  }
  return stage;
}

function withStage(base: string, deploymentStage: string | undefined): string {
  return deploymentStage === undefined ? base : `${base}-${deploymentStage}`;
}

/** The topic a repartitioning keyBy writes: `<pipeline>[-<deployment stage>]-<keyBy name>-repartition`. */
export function repartitionTopicName(pipeline: string, keyByName: string, deploymentStage: string | undefined): string {
  return `${withStage(pipeline, deploymentStage)}-${keyByName}-repartition`;
}

/**
 * The consumer group of a stage's trigger: a source stage's `setGroupId` with the deployment
 * stage after it, a repartition stage's `<pipeline>[-<deployment stage>]-<stage id>`.
 * (`committedOffsets()` still starts from the group the source names, as Flink's KafkaSource does.)
 */
export function consumerGroupOf(plan: Pick<Plan, 'pipeline' | 'deploymentStage'>, stage: Stage): string {
  const { deploymentStage } = plan;
  return stage.input.kind === 'source'
    ? withStage(stage.input.source.source.config.groupId, deploymentStage)
    : `${withStage(plan.pipeline, deploymentStage)}-${stage.id}`;
}

/** The EXACTLY_ONCE sink of a stage, whose settings its transactions take. */
export function exactlyOnceSinkOf(stage: Stage) {
  for (const node of stage.nodes) {
    if (node.role === 'sink' && node.transformation.sink.config.deliveryGuarantee === DeliveryGuarantee.EXACTLY_ONCE) return node.transformation.sink;
  }
  return undefined;
}

/**
 * What a stage's transactional ids start with: its EXACTLY_ONCE sink's `setTransactionalIdPrefix`
 * (else `<pipeline>-tx`), the deployment stage, and the stage id; the processor adds the input
 * partition and the pool slot (docs/PROTOCOL.md, "Transactional ids").
 */
export function transactionalIdPrefixOf(plan: Pick<Plan, 'pipeline' | 'deploymentStage'>, stage: Stage): string {
  const prefix = exactlyOnceSinkOf(stage)?.config.transactionalIdPrefix ?? `${plan.pipeline}-tx`;
  return `${withStage(prefix, plan.deploymentStage)}-${stage.id}`;
}

/** Where a deployed pipeline's coordinators say which deployment runs (lib/runtime/deployment-claim.ts). */
export function deploymentsTopicName(plan: Pick<Plan, 'pipeline' | 'deploymentStage'>): string {
  return `${withStage(plan.pipeline, plan.deploymentStage)}-deployments`;
}
