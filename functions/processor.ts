// The processor function of one stage (SLUICE_STAGE): MSK or self-managed Kafka events, and ticks.
import type { LambdaKafkaEvent } from '../lib/aws/kafka-event.js';
import { lambdaRuntime, requiredEnvironment } from '../lib/aws/lambda-runtime.js';
import { processorHandler, type TickEvent } from '../lib/runtime/handlers.js';

export const handler = async (event: LambdaKafkaEvent | TickEvent) =>
  processorHandler(await lambdaRuntime(), requiredEnvironment('SLUICE_STAGE', 'the stage this function processes, e.g. stage-1'))(event);
