// A batching window of 0 s means "invoke as soon as records arrive", but the framework drops a
// falsy MaximumBatchingWindowInSeconds, which leaves Lambda's default of 500 ms. This puts
// the 0 back into each Kafka trigger that asked for it.
'use strict';

class SluiceBatchingWindow {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:package:compileEvents': () => this.keepZeroWindows() };
  }

  keepZeroWindows() {
    const { service } = this.serverless;
    const { naming } = this.serverless.getProvider('aws');
    const mappings = Object.values(service.provider.compiledCloudFormationTemplate.Resources).filter((resource) => resource.Type === 'AWS::Lambda::EventSourceMapping');
    for (const [name, fn] of Object.entries(service.functions)) {
      for (const event of fn.events ?? []) {
        const trigger = event.msk ?? event.kafka;
        if (!trigger || Number(trigger.maximumBatchingWindow) !== 0) continue;
        const functionId = naming.getLambdaLogicalId(name);
        for (const { Properties: properties } of mappings) {
          if (properties.FunctionName?.['Fn::GetAtt']?.[0] === functionId && properties.Topics?.[0] === trigger.topic) properties.MaximumBatchingWindowInSeconds = 0;
        }
      }
    }
  }
}

module.exports = SluiceBatchingWindow;
