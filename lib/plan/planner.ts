import type { StreamExecutionEnvironment } from '../api/environment.js';
import type { KeyByTransformation, SourceTransformation, Transformation } from '../api/transformations.js';
import { DeliveryGuarantee } from '../kafka/delivery-guarantee.js';
import { latencyShapeOf, resolvedEventSourceMapping } from './batching.js';
import { repartitionTopicName, validDeploymentStage } from './names.js';
import type { Plan, PlanEdge, PlanNode, Stage, StageInput } from './plan.js';

/** A pipeline that cannot run as written; the message says what to change. */
export class PipelineValidationError extends Error {
  override readonly name = 'PipelineValidationError';
}

function fail(message: string): never {
  throw new PipelineValidationError(message);
}

function kindOf(t: Transformation): string {
  return t.kind === 'operator' ? t.operatorKind : t.kind;
}

/** Gives automatic names (`map`, `map-2`, ...) and refuses two explicit names that collide. */
function assignNames(transformations: readonly Transformation[]): void {
  const explicit = new Map<string, Transformation>();
  for (const t of transformations.filter((t) => t.nameIsExplicit)) {
    const other = explicit.get(t.name);
    if (other) {
      fail(
        `Two operators are named "${t.name}" (a ${kindOf(other)} and a ${kindOf(t)}); operator names must be unique ` +
          `because they name state and topics: rename one with .name('...')`,
      );
    }
    explicit.set(t.name, t);
  }
  const taken = new Set(explicit.keys());
  for (const t of transformations.filter((t) => !t.nameIsExplicit)) {
    let name = t.name;
    for (let n = 2; taken.has(name); n++) name = `${t.name}-${n}`;
    t.name = name;
    taken.add(name);
  }
}

/**
 * Where a node's elements are, and by which keyBy they are partitioned there: none yet (as the
 * stage's input is), a keyBy, or `mixed` after a union of streams partitioned differently.
 */
interface Context {
  readonly stage: StageBuilder;
  readonly keyBy: KeyByTransformation | undefined | 'mixed';
}

interface StageBuilder {
  readonly id: string;
  readonly input: StageInput;
  readonly nodes: PlanNode[];
}

function inPlace(context: Context, keyBy: KeyByTransformation): boolean {
  // A broadcast reaches every partition only through a repartition topic that the stage writes.
  if (keyBy.allToOne || keyBy.broadcast || context.keyBy === 'mixed') return false;
  if (context.keyBy) return context.keyBy.keySelector === keyBy.keySelector;
  return context.stage.input.kind === 'source' && context.stage.input.partitionedByRecordKey;
}

/**
 * The transformations that lead to a sink. The rest would compute what no one reads, and a keyBy
 * among them would fill a repartition topic: keyed streams that `connect` keys anew leave theirs so.
 */
function reachingASink(transformations: readonly Transformation[]): Set<number> {
  const live = new Set<number>();
  const visit = (t: Transformation) => {
    if (live.has(t.id)) return;
    live.add(t.id);
    for (const input of t.inputs) visit(input);
  };
  for (const t of transformations) if (t.kind === 'sink') visit(t);
  return live;
}

/**
 * How a node's output is partitioned, within its one stage: as its input is, or after a union,
 * as its inputs all are (a union of a keyed stream with itself, as connect makes, stays keyed).
 */
function partitioningAfter(t: Transformation, contexts: ReadonlyMap<number, Context[]>): Context['keyBy'] {
  const inputs = t.inputs.flatMap((input) => contexts.get(input.id) ?? []);
  const [first] = inputs;
  return inputs.every((context) => context.keyBy === first?.keyBy) ? first?.keyBy : 'mixed';
}

export interface PlanOptions {
  /** The deployment stage whose names the plan takes (see {@link Plan.deploymentStage}). */
  readonly deploymentStage?: string | undefined;
}

/**
 * Compiles a pipeline into stages. A stage starts at a source or at a repartition topic; a
 * keyBy whose key is not the one the stage's input is partitioned by ends its stage in a
 * repartition topic (`<pipeline>[-<deployment stage>]-<keyBy name>-repartition`) and starts a
 * new stage there, as Kafka Streams does. Operators after a union of several stages' streams
 * run in each.
 */
export function planPipeline(env: StreamExecutionEnvironment, { deploymentStage }: PlanOptions = {}): Plan {
  if (deploymentStage !== undefined) validDeploymentStage(deploymentStage);
  const transformations = env.getTransformations();
  assignNames(transformations);
  if (!transformations.some((t) => t.kind === 'sink')) {
    fail(`Pipeline "${env.name}" writes nowhere: end it with .sinkTo(KafkaSink.builder()...build())`);
  }

  const stages: StageBuilder[] = [];
  const contexts = new Map<number, Context[]>();
  const newStage = (input: StageInput): StageBuilder => {
    const stage = { id: `stage-${stages.length + 1}`, input, nodes: [] };
    stages.push(stage);
    return stage;
  };
  const contextsOf = (t: Transformation): Context[] =>
    t.inputs.flatMap((input) => contexts.get(input.id) ?? []).filter((c, i, all) => all.findIndex((o) => o.stage === c.stage) === i);
  const edgesIn = (stage: StageBuilder, t: Transformation) =>
    t.inputs
      .filter((input) => stage.nodes.some((node) => node.id === input.id))
      .map((input) => ({ from: input.id }));

  const live = reachingASink(transformations);
  for (const t of transformations) {
    if (!live.has(t.id)) continue;
    switch (t.kind) {
      case 'source': {
        const input: StageInput = { kind: 'source', source: t, partitionedByRecordKey: t.source.config.partitionedByRecordKey };
        const stage = newStage(input);
        stage.nodes.push({ role: 'source', id: t.id, name: t.name, inputs: [], transformation: t });
        contexts.set(t.id, [{ stage, keyBy: undefined }]);
        break;
      }
      case 'keyBy': {
        const inputs = contextsOf(t);
        const [only] = inputs;
        if (only && inputs.length === 1 && inPlace(only, t)) {
          only.stage.nodes.push({ role: 'keyBy', id: t.id, name: t.name, inputs: edgesIn(only.stage, t), transformation: t, inPlace: true });
          contexts.set(t.id, [{ stage: only.stage, keyBy: t }]);
          break;
        }
        const topic = repartitionTopicName(env.name, t.name, deploymentStage);
        // windowAll's one key needs one partition, and so one shard, as Flink runs it at parallelism 1.
        const partitions = t.allToOne ? 1 : env.getParallelism();
        for (const { stage } of inputs) {
          stage.nodes.push({ role: 'repartition', id: t.id, name: t.name, inputs: edgesIn(stage, t), transformation: t, topic, partitions });
        }
        const stage = newStage({ kind: 'repartition', topic, partitions, keyBy: t, upstream: inputs.map(({ stage: s }) => s.id) });
        stage.nodes.push(
          { role: 'repartition-input', id: 0, name: `${t.name}-input`, inputs: [], transformation: t },
          { role: 'keyBy', id: t.id, name: t.name, inputs: [{ from: 0 }], transformation: t, inPlace: true },
        );
        contexts.set(t.id, [{ stage, keyBy: t }]);
        break;
      }
      default: {
        const inputs = contextsOf(t);
        if (t.kind === 'operator' && t.keyed && inputs.length > 1) {
          fail(`${t.name} is keyed but its input comes from several stages: put a keyBy(...) directly before it`);
        }
        for (const { stage } of inputs) {
          const base = { id: t.id, name: t.name, inputs: edgesIn(stage, t) };
          if (t.kind === 'operator') stage.nodes.push({ ...base, role: 'operator', transformation: t, state: t.factory().describeState() });
          else if (t.kind === 'union') stage.nodes.push({ ...base, role: 'union', transformation: t });
          else if (t.kind === 'sink') stage.nodes.push({ ...base, role: 'sink', transformation: t });
          else {
            const tag = t.tag.id;
            stage.nodes.push({ ...base, role: 'sideOutput', transformation: t, inputs: base.inputs.map((e) => ({ ...e, sideOutput: tag })) });
          }
        }
        contexts.set(t.id, inputs.map(({ stage }) => ({ stage, keyBy: inputs.length === 1 ? partitioningAfter(t, contexts) : undefined })));
        break;
      }
    }
  }

  const plan: Plan = {
    pipeline: env.name,
    ...(deploymentStage === undefined ? {} : { deploymentStage }),
    stages: stages.map(({ id, input, nodes }): Stage => ({ id, input, nodes })),
    maxParallelism: env.getMaxParallelism(),
    parallelism: env.getParallelism(),
    checkpointing: {
      intervalMs: env.getCheckpointConfig().checkpointInterval,
      timeoutMs: env.getCheckpointConfig().checkpointTimeout,
      minPauseMs: env.getCheckpointConfig().minPauseBetweenCheckpoints,
      maxCommitDelayMs: env.getCheckpointConfig().maxCommitDelay,
      outputCommit: env.getCheckpointConfig().outputCommit,
    },
    badRecordPolicy: env.getBadRecordPolicy(),
    recordContentsInErrors: env.getRecordContentsInErrors(),
    ...(env.getMaxEventTimeAhead() === undefined ? {} : { maxEventTimeAheadMs: env.getMaxEventTimeAhead() }),
    internalGuarantee: strongestGuarantee(transformations),
    watermarkEmission: env.getWatermarkEmission(),
    eventSourceMapping: env.getEventSourceMapping(),
  };
  validateTimestampAssigners(stages);
  validateEventTime(stages);
  validateTransactions(plan, transformations);
  return { ...plan, eventSourceMapping: resolvedEventSourceMapping(plan.eventSourceMapping, latencyShapeOf(plan)) };
}

function strongestGuarantee(transformations: readonly Transformation[]): DeliveryGuarantee {
  const guarantees = transformations.flatMap((t) => (t.kind === 'sink' ? [t.sink.config.deliveryGuarantee] : []));
  for (const g of [DeliveryGuarantee.EXACTLY_ONCE, DeliveryGuarantee.AT_LEAST_ONCE] as const) {
    if (guarantees.includes(g)) return g;
  }
  return DeliveryGuarantee.NONE;
}

/** A stage's `assignTimestampsAndWatermarks` nodes (the planner allows one). */
export function timestampAssigners(stage: Pick<Stage, 'nodes'>): PlanNode[] {
  return stage.nodes.filter((node) => node.role === 'operator' && node.transformation.watermarks !== undefined);
}

/**
 * `assignTimestampsAndWatermarks` sets a source stage's event time: one per stage, on a source
 * without watermarks of its own, after element-wise functions only, with nothing else reading
 * the stream before it (a branch around it would see its watermarks with the records' times).
 */
function validateTimestampAssigners(stages: readonly StageBuilder[]): void {
  for (const stage of stages) {
    const [assigner, second] = timestampAssigners(stage);
    if (!assigner) continue;
    if (second) fail(`${stage.id} has two assignTimestampsAndWatermarks (${assigner.name}, ${second.name}): keep one`);
    if (stage.input.kind !== 'source') {
      fail(
        `${assigner.name}: assignTimestampsAndWatermarks must come before the first keyBy that repartitions: a later stage's ` +
          `watermark is the minimum of the stages before it. Move it up to the source, or give the source its WatermarkStrategy`,
      );
    }
    const { source } = stage.input;
    if (source.watermarks.hasWatermarks) {
      fail(
        `${assigner.name}: source "${source.name}" has a WatermarkStrategy of its own (${source.watermarks.description}); give it ` +
          `WatermarkStrategy.noWatermarks() and let assignTimestampsAndWatermarks set event time, or drop one of the two`,
      );
    }
    const readers = (id: number) => stage.nodes.filter((node) => node.inputs.some((edge) => edge.from === id));
    for (let node: PlanNode = assigner; node.role !== 'source'; ) {
      const [edge, other]: readonly PlanEdge[] = node.inputs;
      const parent: PlanNode | undefined = stage.nodes.find((candidate) => candidate.id === edge?.from);
      if (!parent || other || readers(parent.id).length > 1 || edge?.sideOutput !== undefined) {
        fail(`${assigner.name}: assignTimestampsAndWatermarks must be the only reader of a plain chain from the source (no union, branch or side output before it)`);
      }
      if (parent.role !== 'source' && (parent.role !== 'operator' || parent.transformation.keyed || parent.transformation.eventTime)) {
        fail(`${assigner.name}: only element-wise functions (map, filter, flatMap, process) may come before assignTimestampsAndWatermarks, not ${parent.name}`);
      }
      node = parent;
    }
  }
}

/** A source whose stage, or a stage before it, gets no event time: no watermarks, and no assignTimestampsAndWatermarks. */
function untimedSource(stage: StageBuilder, stages: readonly StageBuilder[]): SourceTransformation | undefined {
  if (stage.input.kind === 'source') {
    const [assigner] = timestampAssigners(stage);
    if (assigner?.role === 'operator' && assigner.transformation.watermarks?.hasWatermarks) return undefined;
    return stage.input.source.watermarks.hasWatermarks ? undefined : stage.input.source;
  }
  for (const id of stage.input.upstream) {
    const upstream = stages.find((candidate) => candidate.id === id);
    const source = upstream && untimedSource(upstream, stages);
    if (source) return source;
  }
  return undefined;
}

function validateEventTime(stages: readonly StageBuilder[]): void {
  for (const stage of stages) {
    for (const node of stage.nodes) {
      if (node.role !== 'operator' || !node.transformation.eventTime) continue;
      const source = untimedSource(stage, stages);
      if (source) {
        fail(
          `${node.name} uses event time, but source "${source.name}" has WatermarkStrategy.noWatermarks(): give it ` +
            `WatermarkStrategy.forBoundedOutOfOrderness(ms) (or forMonotonousTimestamps()), or assignTimestampsAndWatermarks(...) ` +
            `after it, or use a processing-time window`,
        );
      }
    }
  }
}

function validateTransactions(plan: Plan, transformations: readonly Transformation[]): void {
  const { intervalMs, timeoutMs, maxCommitDelayMs } = plan.checkpointing;
  for (const t of transformations) {
    if (t.kind !== 'sink' || t.sink.config.deliveryGuarantee !== DeliveryGuarantee.EXACTLY_ONCE) continue;
    if (intervalMs <= 0) {
      fail(
        `${t.name} is EXACTLY_ONCE, which commits its output at checkpoints: call env.enableCheckpointing(ms) ` +
          `(for example 60_000)`,
      );
    }
    const needed = intervalMs + timeoutMs + maxCommitDelayMs;
    const { transactionTimeoutMs } = t.sink.config;
    if (transactionTimeoutMs <= needed) {
      fail(
        `${t.name}: transaction.timeout.ms (${transactionTimeoutMs}) must exceed checkpoint interval (${intervalMs}) + ` +
          `checkpoint timeout (${timeoutMs}) + max commit delay (${maxCommitDelayMs}) = ${needed}, or the broker may ` +
          `abort a transaction before its checkpoint commits it. Raise transaction.timeout.ms (up to the brokers' ` +
          `transaction.max.timeout.ms), or shorten the checkpoint interval or timeout.`,
      );
    }
  }
}

/**
 * Refuses what only runs in a test harness: a bounded `env.fromData` source, which the
 * serverless runtime and offline mode, reading Kafka, cannot feed.
 */
export function assertDeployable(plan: Plan): Plan {
  for (const stage of plan.stages) {
    if (stage.input.kind === 'source' && stage.input.source.source.config.boundedData) {
      fail(
        `Source "${stage.input.source.name}" is env.fromData(...): bounded data for tests, which runs in executeAndCollect or a ` +
          `PipelineTestHarness. To deploy or run the pipeline offline, read a topic with env.fromSource(KafkaSource.builder()...)`,
      );
    }
  }
  return plan;
}
