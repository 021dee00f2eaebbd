// The commit function: commits the transactions of completed checkpoints. Safe to invoke by hand.
import pipeline from 'sluice-pipeline';
import { commitFunction } from '../lib/aws/lambda-runtime.js';

export const handler = commitFunction(pipeline);
