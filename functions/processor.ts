// The processor function of one stage (SLUICE_STAGE): MSK or self-managed Kafka events, and ticks.
import pipeline from 'sluice-pipeline';
import type { LambdaKafkaEvent } from '../lib/aws/kafka-event.js';
import { lambdaRuntime, requiredEnvironment } from '../lib/aws/lambda-runtime.js';
import { processorHandler, type TickEvent } from '../lib/runtime/handlers.js';

const stage = requiredEnvironment('SLUICE_STAGE', 'the stage this function processes, e.g. stage-1');

export const handler = (event: LambdaKafkaEvent | TickEvent) => processorHandler(lambdaRuntime(pipeline), stage)(event);
