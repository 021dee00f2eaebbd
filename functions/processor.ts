// The processor function of one stage (SLUICE_STAGE): MSK or self-managed Kafka events, and ticks.
import pipeline from 'sluice-pipeline';
import { processorFunction, requiredEnvironment } from '../lib/aws/lambda-runtime.js';

export const handler = processorFunction(pipeline, requiredEnvironment('SLUICE_STAGE', 'the stage this function processes, e.g. stage-1'));
