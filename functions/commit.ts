// The commit function: commits the transactions of completed checkpoints. Safe to invoke by hand.
import { lambdaRuntime } from '../lib/aws/lambda-runtime.js';
import { commitHandler } from '../lib/runtime/handlers.js';

export const handler = async () => commitHandler(await lambdaRuntime())();
