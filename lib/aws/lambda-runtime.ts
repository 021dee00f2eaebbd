import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import type { ShardTarget } from '../runtime/shard-record.js';
import { coordinatorPeriodMs, repeatCoordinator, resting } from '../runtime/coordinator-loop.js';
import { commitHandler, coordinatorHandler, processorHandler, type TickEvent } from './handlers.js';
import type { LambdaKafkaEvent } from './kafka-event.js';
import { Observability } from './observability.js';
import { configWithSecrets, PipelineRuntime } from './runtime.js';
import { requiredEnvironment } from './environment.js';

export { requiredEnvironment } from './environment.js';

/**
 * What the deployed functions share: the pipeline (bundled in: the functions import it as
 * `sluice-pipeline`, which the build points at the pipeline file) and its runtime, built once
 * per container.
 */
let runtime: Promise<PipelineRuntime> | undefined;
let observability: Observability | undefined;

export function lambdaRuntime(pipeline: StreamExecutionEnvironment, env: NodeJS.ProcessEnv = process.env): Promise<PipelineRuntime> {
  runtime ??= configWithSecrets(env).then(
    (config) => {
      const coordinatorFunction = env.SLUICE_COORDINATOR_FUNCTION;
      // A processor that takes input while the pipeline rests calls the coordinator, whose schedule is off.
      return new PipelineRuntime(pipeline, config, coordinatorFunction ? { callCoordinator: () => invokeAsync(coordinatorFunction, {}) } : {});
    },
    (error: unknown) => {
      // A secret not readable yet (its policy being fixed) is read again by the next invocation.
      runtime = undefined;
      throw error;
    },
  );
  return runtime;
}

function observed(pipeline: StreamExecutionEnvironment): Observability {
  observability ??= new Observability(pipeline.name);
  return observability;
}

/** Runs `work`, logging its failure (then rethrowing it, so that Lambda retries) with what was being done. */
async function logged<T>(pipeline: StreamExecutionEnvironment, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    observed(pipeline).logger.error(`${what} failed`, error as Error);
    throw error;
  }
}

/** The processor function of `stage`, with its metrics and logs. */
export function processorFunction(pipeline: StreamExecutionEnvironment, stage: string) {
  return (event: LambdaKafkaEvent | TickEvent) =>
    logged(pipeline, `Processing ${stage}`, async () => {
      const started = Date.now();
      const result = await processorHandler(await lambdaRuntime(pipeline), stage)(event);
      observed(pipeline).batches(stage, result.batches, Date.now() - started);
      return result;
    });
}

/** What one invocation of the coordinator function runs for: it is scheduled once a minute. */
export const COORDINATOR_RUN_FOR_MS = 55_000;

/**
 * The coordinator function: scheduled once a minute, it runs the coordinator at least every
 * quarter checkpoint interval (100 ms … 1 s), and more often while a checkpoint is in flight,
 * for most of that minute — ticking idle shards by
 * invoking their processor, starting the commit function — and reports each run that did
 * more than find nothing due.
 */
export function coordinatorFunction(pipeline: StreamExecutionEnvironment, env: NodeJS.ProcessEnv = process.env) {
  const commitFunction = requiredEnvironment('SLUICE_COMMIT_FUNCTION', 'the name of the commit function', env);
  return (_event?: unknown, context?: { getRemainingTimeInMillis(): number }) =>
    logged(pipeline, 'The coordinator', async () => {
      const runtime = await lambdaRuntime(pipeline);
      const periodMs = coordinatorPeriodMs(runtime.plan.checkpointing.intervalMs);
      // Shards get a period to acknowledge with their own batches before they are ticked, as when the coordinator ran once a period.
      const coordinator = coordinatorHandler(runtime, tickByInvoking(env), () => invokeAsync(commitFunction, {}), Date.now, { tickAfterMs: periodMs });
      const repeated = await repeatCoordinator(
        coordinator,
        {
          periodMs,
          runForMs: COORDINATOR_RUN_FOR_MS,
          ...(context ? { remainingMs: () => context.getRemainingTimeInMillis() } : {}),
        },
        (result) => {
          if (result.outcome !== 'idle') observed(pipeline).coordinator(result);
        },
      );
      if (!resting(repeated.last)) {
        // Awake, its schedule stays on: a rest that turned it off just after a wake had turned
        // it on (the one order the rest's own check cannot see, if it crashed between) is undone here.
        await runtime.schedule?.resume();
        observed(pipeline).checkpointAge(repeated.last.checkpointAgeMs);
      }
      return repeated;
    });
}

/** The commit function, with its metrics; lost transactions are logged as errors with their shard and checkpoint. */
export function commitFunction(pipeline: StreamExecutionEnvironment) {
  return () =>
    logged(pipeline, 'The commit function', async () => {
      const report = await commitHandler(await lambdaRuntime(pipeline))();
      observed(pipeline).commit(report);
      return report;
    });
}

/** Made on first use: a processor calls another function only to wake a resting coordinator, and a container's INIT is billed. */
let lambda: LambdaClient | undefined;

/** Invokes a function asynchronously (fire and forget; Lambda retries it on failure). */
export async function invokeAsync(functionName: string, payload: unknown): Promise<void> {
  const { InvokeCommand, LambdaClient } = await import('@aws-sdk/client-lambda');
  lambda ??= new LambdaClient({});
  await lambda.send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: JSON.stringify(payload) }));
}

/** Ticks an idle shard by invoking its stage's processor function (`SLUICE_PROCESSOR_FUNCTIONS`: JSON stage → function). */
export function tickByInvoking(env: NodeJS.ProcessEnv = process.env): (target: ShardTarget) => Promise<void> {
  const functions = JSON.parse(
    requiredEnvironment('SLUICE_PROCESSOR_FUNCTIONS', 'a JSON object from stage id to its processor function name', env),
  ) as Record<string, string>;
  return async (target) => {
    const functionName = functions[target.stageId];
    if (!functionName) throw new Error(`SLUICE_PROCESSOR_FUNCTIONS names no function for ${target.stageId}`);
    const tick: TickEvent = { sluice: 'tick', ...target };
    await invokeAsync(functionName, tick);
  };
}
