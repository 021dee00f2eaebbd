// The coordinator function, on a schedule: checkpoints, idle-shard ticks, and the commit function's start.
import { invokeAsync, lambdaRuntime, requiredEnvironment, tickByInvoking } from '../lib/aws/lambda-runtime.js';
import { coordinatorHandler } from '../lib/runtime/handlers.js';

export const handler = async () => {
  const commitFunction = requiredEnvironment('SLUICE_COMMIT_FUNCTION', 'the name of the commit function');
  return coordinatorHandler(await lambdaRuntime(), tickByInvoking(), () => invokeAsync(commitFunction, {}))();
};
