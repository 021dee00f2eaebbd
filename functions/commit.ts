// The commit function: commits the transactions of completed checkpoints. Safe to invoke by hand.
import pipeline from 'sluice-pipeline';
import { lambdaRuntime } from '../lib/aws/lambda-runtime.js';
import { commitHandler } from '../lib/runtime/handlers.js';

export const handler = () => commitHandler(lambdaRuntime(pipeline))();
