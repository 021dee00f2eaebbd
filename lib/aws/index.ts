// `sluice/lambda`: the three Lambda functions of a pipeline. `sluice deploy` writes their entry
// files, one line each (`export const handler = processorFunction(pipeline, stage)`).
export { commitFunction, coordinatorFunction, processorFunction, requiredEnvironment } from './lambda-runtime.js';
