import type { OffsetsInitializer } from '../api/source.js';
import { consumerGroupOf, transactionalIdPrefixOf } from './names.js';
import type { Plan, PlanNode, Stage } from './plan.js';
import { triggerStartingPosition } from './trigger-position.js';

/** A plan as plain data: what `sluice explain --json` prints. */
export interface PlanDescription {
  readonly pipeline: string;
  readonly deploymentStage?: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly checkpointing: Plan['checkpointing'];
  readonly badRecordPolicy: string;
  readonly eventSourceMapping: Plan['eventSourceMapping'];
  readonly stages: readonly StageDescription[];
}

export interface StageDescription {
  readonly id: string;
  readonly input: Record<string, unknown>;
  readonly operators: readonly {
    readonly name: string;
    readonly kind: string;
    readonly description: string;
    readonly inputs: readonly string[];
    readonly keyed: boolean;
    readonly state: readonly { readonly name: string; readonly kind: string; readonly ttlMs?: number }[];
  }[];
  readonly outputs: readonly Record<string, unknown>[];
}

/** `group` names the group whose offsets `committed` reads, where it is not the trigger's. */
function offsets(initializer: OffsetsInitializer, group: string | undefined): string {
  switch (initializer.kind) {
    case 'committed':
      return `committed offsets${group === undefined ? '' : ` of group ${group}`} (reset ${initializer.resetStrategy})`;
    case 'timestamp':
      return `offsets at ${new Date(initializer.timestamp).toISOString()}`;
    default:
      return initializer.kind;
  }
}

function describeInput(stage: Stage, plan: Plan): Record<string, unknown> {
  const { input } = stage;
  const triggerGroup = consumerGroupOf(plan, stage);
  if (input.kind === 'repartition') {
    return { kind: 'repartition', topic: input.topic, partitions: input.partitions, keyBy: input.keyBy.name, from: input.upstream, triggerGroup };
  }
  const { source, watermarks, name } = input.source;
  return {
    kind: 'source',
    name,
    topics: source.describeTopics(),
    groupId: source.config.groupId,
    triggerGroup,
    startingOffsets: offsets(source.config.startingOffsets, triggerGroup === source.config.groupId ? undefined : source.config.groupId),
    triggerStartingPosition: triggerStartingPosition(source.config.startingOffsets, Date.now()).startingPosition,
    watermarks: watermarks.description + (watermarks.idlenessMs ? `, idle after ${watermarks.idlenessMs} ms` : ''),
    partitionedByRecordKey: input.partitionedByRecordKey,
  };
}

function describeNode(node: PlanNode, stage: Stage): StageDescription['operators'][number] {
  const names = new Map(stage.nodes.map((n) => [n.id, n.name]));
  const inputs = node.inputs.map((edge) => {
    const from = names.get(edge.from) ?? String(edge.from);
    return edge.sideOutput === undefined ? from : `${from} (side output ${edge.sideOutput})`;
  });
  const base = { name: node.name, inputs, keyed: false, state: [] };
  switch (node.role) {
    case 'source':
      return { ...base, kind: 'source', description: `reads ${node.transformation.source.describeTopics()}` };
    case 'repartition-input':
      return { ...base, kind: 'repartition-input', description: 'reads the repartition topic' };
    case 'keyBy':
      return {
        ...base,
        kind: 'keyBy',
        description: node.inPlace ? 'in place: each element’s key is its record’s Kafka key' : 'keyBy',
      };
    case 'operator': {
      const t = node.transformation;
      return {
        ...base,
        kind: t.operatorKind,
        description: t.description,
        keyed: t.keyed,
        state: node.state.map((d) => ({ name: `${node.name}/${d.name}`, kind: d.kind, ...(d.ttl ? { ttlMs: d.ttl.ttlMs } : {}) })),
      };
    }
    case 'union':
      return { ...base, kind: 'union', description: 'union' };
    case 'sideOutput':
      return { ...base, kind: 'sideOutput', description: `side output "${node.transformation.tag.id}"` };
    case 'sink': {
      const { config } = node.transformation.sink;
      return { ...base, kind: 'sink', description: `writes ${config.serializer.topic ?? '(topic per element)'}, ${config.deliveryGuarantee}` };
    }
    case 'repartition': {
      const { broadcast } = node.transformation;
      const others = broadcast === 'forward' ? 'the others each to the partition of its record’s number' : `keyed by ${node.name}`;
      const description = broadcast ? `writes ${node.topic}: broadcast elements to every partition, ${others}` : `writes ${node.topic} ${others}`;
      return { ...base, kind: 'repartition', description };
    }
  }
}

function describeOutputs(stage: Stage, plan: Plan): Record<string, unknown>[] {
  const outputs: Record<string, unknown>[] = stage.nodes.flatMap((node): Record<string, unknown>[] => {
    if (node.role === 'sink') {
      const { config } = node.transformation.sink;
      return [
        {
          kind: 'sink',
          name: node.name,
          topic: config.serializer.topic ?? '(topic per element)',
          deliveryGuarantee: config.deliveryGuarantee,
          ...(config.deliveryGuarantee === 'EXACTLY_ONCE' ? { transactionalIds: `${transactionalIdPrefixOf(plan, stage)}-<topic>-<partition>-<slot>` } : {}),
          ...(config.deliveryGuarantee === 'EXACTLY_ONCE' ? { transactionTimeoutMs: config.transactionTimeoutMs } : {}),
          ...(config.serializer.recordTimestamp ? { recordTimestamp: config.serializer.recordTimestamp } : {}),
        },
      ];
    }
    if (node.role === 'repartition') {
      return [{ kind: 'repartition', topic: node.topic, partitions: node.partitions, deliveryGuarantee: plan.internalGuarantee }];
    }
    return [];
  });
  if (plan.badRecordPolicy.kind === 'dead-letter') outputs.push({ kind: 'dead-letter', topic: plan.badRecordPolicy.topic });
  return outputs;
}

export function describePlan(plan: Plan): PlanDescription {
  const policy = plan.badRecordPolicy;
  return {
    pipeline: plan.pipeline,
    ...(plan.deploymentStage === undefined ? {} : { deploymentStage: plan.deploymentStage }),
    parallelism: plan.parallelism,
    maxParallelism: plan.maxParallelism,
    checkpointing: plan.checkpointing,
    badRecordPolicy: policy.kind === 'dead-letter' ? `dead-letter to ${policy.topic}` : policy.kind,
    eventSourceMapping: plan.eventSourceMapping,
    stages: plan.stages.map((stage) => ({
      id: stage.id,
      input: describeInput(stage, plan),
      operators: stage.nodes.map((node) => describeNode(node, stage)),
      outputs: describeOutputs(stage, plan),
    })),
  };
}

function formatTriggers({ batchSize, maximumBatchingWindowSeconds, provisionedPollers, latencyGoalSeconds }: Plan['eventSourceMapping']): string {
  const goal = latencyGoalSeconds === undefined ? '' : ` (kept within a latency goal of ${latencyGoalSeconds} s)`;
  return [
    `batches of ${batchSize ?? 'the deployment’s batchSize'}`,
    `window ${maximumBatchingWindowSeconds === undefined ? 'the deployment’s batchingWindowSeconds' : `${maximumBatchingWindowSeconds} s${goal}`}`,
    provisionedPollers ? `provisioned pollers ${provisionedPollers.minimum} to ${provisionedPollers.maximum}` : 'on-demand pollers',
  ].join(', ');
}

/** The plan as text for people: what `sluice explain` prints. */
export function formatPlan(plan: Plan): string {
  const d = describePlan(plan);
  const { intervalMs, timeoutMs } = d.checkpointing;
  const lines = [
    `Pipeline ${d.pipeline}${d.deploymentStage === undefined ? '' : ` (deployment stage ${d.deploymentStage})`}: ${d.stages.length} stage${d.stages.length === 1 ? '' : 's'}`,
    `  checkpoints: ${intervalMs > 0 ? `every ${intervalMs} ms, timeout ${timeoutMs} ms` : 'off'}; ` +
      `key groups: ${d.maxParallelism}; repartition partitions: ${d.parallelism}; bad records: ${d.badRecordPolicy}`,
    `  triggers: ${formatTriggers(d.eventSourceMapping)}`,
  ];
  for (const stage of d.stages) {
    const input = stage.input;
    lines.push('');
    lines.push(
      input.kind === 'source'
        ? `${stage.id}: one shard per partition of ${String(input.topics)} (source "${String(input.name)}")`
        : `${stage.id}: one shard per partition of ${String(input.topic)} (${String(input.partitions)} partitions, written by ${(input.from as string[]).join(', ')})`,
    );
    if (input.kind === 'source') {
      const group = input.groupId === input.triggerGroup ? `group ${String(input.groupId)}` : `trigger group ${String(input.triggerGroup)}`;
      lines.push(
        `  input: ${group}, ${String(input.startingOffsets)} (trigger from ${String(input.triggerStartingPosition)}), watermarks: ${String(input.watermarks)}` +
          (input.partitionedByRecordKey ? ', partitioned by record key' : ''),
      );
    } else {
      lines.push(`  input: trigger group ${String(input.triggerGroup)}`);
    }
    stage.operators.forEach((op, index) => {
      const from = op.inputs.length > 0 ? ` ← ${op.inputs.join(', ')}` : '';
      lines.push(`  ${index + 1}. ${op.name} [${op.kind}${op.keyed ? ', keyed' : ''}] ${op.description}${from}`);
      for (const state of op.state) {
        lines.push(`       state ${state.name} (${state.kind}${state.ttlMs ? `, ttl ${state.ttlMs} ms` : ''})`);
      }
    });
    for (const output of stage.outputs) {
      const details = Object.entries(output)
        .filter(([key]) => key !== 'kind')
        .map(([key, value]) => `${key} ${String(value)}`)
        .join(', ');
      lines.push(`  → ${String(output.kind)}: ${details}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
