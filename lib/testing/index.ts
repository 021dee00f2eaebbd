// `sluice/testing`: the harnesses, which run a pipeline or an operator in memory, with no broker and no AWS client.
export {
  executeAndCollect,
  OperatorTestHarness,
  PipelineTestHarness,
  type PipelineTestHarnessOptions,
  type TestRecord,
  type TimestampedValue,
} from './harness.js';
