// The coordinator function, on a schedule: checkpoints, idle-shard ticks, and the commit function's start.
import pipeline from 'sluice-pipeline';
import { coordinatorFunction } from '../lib/aws/lambda-runtime.js';

export const handler = coordinatorFunction(pipeline);
