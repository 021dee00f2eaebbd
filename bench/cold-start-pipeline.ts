// The bench pipeline as a pipeline file, so that bench/cold-start.ts can package it as it
// deploys: its topics come from the environment, at packaging and in the function alike.
import { requiredEnvironment } from '../lib/aws/environment.js';
import { benchPipeline } from './pipeline.js';

export default benchPipeline({
  brokers: requiredEnvironment('KAFKA_BROKERS', 'the brokers').split(','),
  input: requiredEnvironment('BENCH_INPUT', 'the orders topic'),
  output: requiredEnvironment('BENCH_OUTPUT', 'the window sums topic'),
  guarantee: 'EXACTLY_ONCE',
  checkpointIntervalMs: 5_000,
});
