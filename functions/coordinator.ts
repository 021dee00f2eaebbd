// The coordinator function, on a schedule: checkpoints, idle-shard ticks, and the commit function's start.
import pipeline from 'sluice-pipeline';
import { invokeAsync, lambdaRuntime, requiredEnvironment, tickByInvoking } from '../lib/aws/lambda-runtime.js';
import { coordinatorHandler } from '../lib/runtime/handlers.js';

const commitFunction = requiredEnvironment('SLUICE_COMMIT_FUNCTION', 'the name of the commit function');

export const handler = () => coordinatorHandler(lambdaRuntime(pipeline), tickByInvoking(), () => invokeAsync(commitFunction, {}))();
