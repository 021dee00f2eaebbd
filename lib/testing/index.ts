export {
  executeAndCollect,
  OperatorTestHarness,
  PipelineTestHarness,
  type PipelineTestHarnessOptions,
  type TestRecord,
  type TimestampedValue,
} from './harness.js';
export { LambdaDriver } from './lambda-driver.js';
