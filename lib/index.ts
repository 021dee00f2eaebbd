// The package `sluice`: the DataStream API, Flink SQL and the Table API, and the registry formats. It loads neither kafkajs nor
// the AWS SDK (test/unit/package/entry-points.test.ts): the runtime comes in through `sluice/lambda`.
export * from './api/index.js';
export * from './formats/index.js';
export * from './sql/index.js';
export { glueSchemaRegistryFromEnvironment, schemaRegistryFromEnvironment } from './aws/schema-registry.js';
