import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import type { ShardTarget } from '../runtime/coordinator.js';
import type { TickEvent } from '../runtime/handlers.js';
import { configFromEnvironment, PipelineRuntime } from '../runtime/runtime.js';
import { requiredEnvironment } from './environment.js';

export { requiredEnvironment } from './environment.js';

/**
 * What the deployed functions share: the pipeline (bundled in: the functions import it as
 * `sluice-pipeline`, which the build points at the pipeline file) and its runtime, built once
 * per container.
 */
let runtime: PipelineRuntime | undefined;

export function lambdaRuntime(pipeline: StreamExecutionEnvironment, env: NodeJS.ProcessEnv = process.env): PipelineRuntime {
  runtime ??= new PipelineRuntime(pipeline, configFromEnvironment(env));
  return runtime;
}

const lambda = new LambdaClient({});

/** Invokes a function asynchronously (fire and forget; Lambda retries it on failure). */
export async function invokeAsync(functionName: string, payload: unknown): Promise<void> {
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
