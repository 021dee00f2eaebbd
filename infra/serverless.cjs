// What serverless.yml deploys for one pipeline, computed from its plan: a processor function
// per stage with its MSK (or self-managed Kafka) trigger, the coordinator on a schedule, the
// commit function, the state table and snapshot bucket, and least-privilege IAM statements
// scoped to this pipeline's own table, bucket, cluster, topics, groups, transactional ids and
// functions. The pipeline file is SLUICE_PIPELINE_FILE (default: the seed example).
'use strict';

const path = require('node:path');

const DEFAULT_PIPELINE = 'examples/order-aggregation.ts';

async function loadPlan(file) {
  const { tsImport } = await import('tsx/esm/api');
  const here = path.join(__dirname, 'serverless.cjs');
  const pipeline = (await tsImport(path.resolve(file), here)).default;
  const { planPipeline } = await tsImport('../lib/plan/planner.ts', here);
  return planPipeline(pipeline);
}

/** Function names are `<service>-<stage>-<function>`; Lambda allows 64 characters. */
function functionKey(name) {
  return name.replace(/[^A-Za-z0-9]/g, '');
}

function stageTopics(stage) {
  if (stage.input.kind === 'repartition') return [stage.input.topic];
  const { topics } = stage.input.source.source.config;
  if (!topics) throw new Error(`${stage.id} reads a topic pattern: list its topics (setTopics) to deploy it with MSK triggers`);
  return topics;
}

function groupOf(plan, stage) {
  return stage.input.kind === 'source' ? stage.input.source.source.config.groupId : `${plan.pipeline}-${stage.id}`;
}

function sinkTopics(stage) {
  return stage.nodes.flatMap((node) => (node.role === 'sink' ? [node.transformation.sink.config.serializer.topic ?? '*'] : []));
}

function transactionalPrefixes(plan) {
  const prefixes = new Set([`${plan.pipeline}-tx`]);
  for (const stage of plan.stages) {
    for (const node of stage.nodes) if (node.role === 'sink' && node.transformation.sink.config.transactionalIdPrefix) prefixes.add(node.transformation.sink.config.transactionalIdPrefix);
  }
  return [...prefixes];
}

/**
 * A stage's trigger: Amazon MSK by default; with SLUICE_KAFKA_TRIGGER=self-managed, a
 * self-managed Kafka event source (bootstrap servers, SASL/SCRAM credentials from Secrets
 * Manager, the VPC to reach the brokers from).
 */
function trigger(topic, consumerGroupId) {
  const common = {
    topic,
    batchSize: '${param:batchSize}',
    maximumBatchingWindow: '${param:batchingWindowSeconds}',
    startingPosition: 'TRIM_HORIZON',
    consumerGroupId,
    enabled: true,
  };
  if (process.env.SLUICE_KAFKA_TRIGGER === 'self-managed') {
    return {
      kafka: {
        ...common,
        bootstrapServers: ['${param:kafkaBootstrapServers}'],
        accessConfigurations: {
          saslScram512Auth: '${param:kafkaScramSecretArn}',
          vpcSubnet: ['${param:subnetIdA}', '${param:subnetIdB}'],
          vpcSecurityGroup: '${param:securityGroupId}',
        },
      },
    };
  }
  return { msk: { arn: '${param:mskClusterArn}', ...common } };
}

module.exports = async () => {
  const plan = await loadPlan(process.env.SLUICE_PIPELINE_FILE || DEFAULT_PIPELINE);
  const service = '${self:service}-${sls:stage}';
  const kafkaArn = (kind, name) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:kafka:\${AWS::Region}:\${AWS::AccountId}:${kind}/\${param:mskClusterName}/\${param:mskClusterUuid}/${name}` });

  const functions = {};
  const processorNames = {};
  for (const stage of plan.stages) {
    const key = functionKey(`processor-${stage.id}`);
    processorNames[stage.id] = `${service}-${key}`;
    functions[key] = {
      handler: 'functions/processor.handler',
      description: `Sluice ${plan.pipeline}: processes ${stage.id} (${stageTopics(stage).join(', ')})`,
      environment: { SLUICE_STAGE: stage.id },
      events: stageTopics(stage).map((topic) => trigger(topic, groupOf(plan, stage))),
    };
  }
  const commitKey = 'commit';
  functions.coordinator = {
    handler: 'functions/coordinator.handler',
    description: `Sluice ${plan.pipeline}: triggers and completes checkpoints, ticks idle shards`,
    environment: { SLUICE_PROCESSOR_FUNCTIONS: JSON.stringify(processorNames), SLUICE_COMMIT_FUNCTION: `${service}-${commitKey}` },
    // Each invocation runs the coordinator for 55 s (lib/aws/lambda-runtime.ts), so that
    // checkpoints are triggered and completed within a second of their time.
    events: [{ schedule: { rate: 'rate(1 minute)' } }],
    timeout: 70,
    memorySize: 256,
  };
  functions[commitKey] = {
    handler: 'functions/commit.handler',
    description: `Sluice ${plan.pipeline}: commits the Kafka transactions of completed checkpoints`,
  };

  const functionArns = [...Object.values(processorNames), `${service}-${commitKey}`].map((name) => ({
    'Fn::Sub': `arn:\${AWS::Partition}:lambda:\${AWS::Region}:\${AWS::AccountId}:function:${name}`,
  }));
  const readTopics = [...new Set(plan.stages.flatMap(stageTopics))];
  const writeTopics = [
    ...new Set([
      ...plan.stages.flatMap(sinkTopics),
      ...plan.stages.flatMap((s) => (s.input.kind === 'repartition' ? [s.input.topic] : [])),
      ...(plan.badRecordPolicy.kind === 'dead-letter' ? [plan.badRecordPolicy.topic] : []),
    ]),
  ];
  const statements = [
    {
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem'],
      Resource: [{ 'Fn::GetAtt': ['StateTable', 'Arn'] }],
    },
    {
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:PutObject'],
      Resource: [{ 'Fn::Sub': `\${SnapshotBucket.Arn}/${plan.pipeline}/*` }],
    },
    {
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: [{ 'Fn::GetAtt': ['SnapshotBucket', 'Arn'] }],
      Condition: { StringLike: { 's3:prefix': [`${plan.pipeline}/*`] } },
    },
    { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: functionArns },
    { Effect: 'Allow', Action: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'], Resource: ['${param:mskClusterArn}'] },
    {
      Effect: 'Allow',
      Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
      Resource: readTopics.map((topic) => kafkaArn('topic', topic)),
    },
    {
      Effect: 'Allow',
      // DescribeTopicDynamicConfiguration: the processor reads the retention, timestamp and
      // size settings of the topics it writes (lib/runtime/output-limits.ts). ReadData: the
      // commit function reads a fenced transaction's first record back, to tell a committed
      // transaction from a lost one (lib/kafka/committer.ts).
      Action: [
        'kafka-cluster:DescribeTopic',
        'kafka-cluster:DescribeTopicDynamicConfiguration',
        'kafka-cluster:WriteData',
        'kafka-cluster:ReadData',
      ],
      Resource: writeTopics.map((topic) => kafkaArn('topic', topic)),
    },
    {
      Effect: 'Allow',
      Action: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
      Resource: [...new Set(plan.stages.map((stage) => groupOf(plan, stage)))].map((group) => kafkaArn('group', group)),
    },
    {
      Effect: 'Allow',
      Action: ['kafka-cluster:DescribeTransactionalId', 'kafka-cluster:AlterTransactionalId'],
      Resource: transactionalPrefixes(plan).map((prefix) => kafkaArn('transactional-id', `${prefix}-*`)),
    },
    // What Lambda's MSK event source mapping needs on the function's role, and a function in a VPC.
    { Effect: 'Allow', Action: ['kafka:DescribeCluster', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers'], Resource: ['${param:mskClusterArn}'] },
    {
      Effect: 'Allow',
      // EC2's Describe* actions cannot be scoped to resources (AWS allows only "*" for them).
      Action: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups', 'ec2:DescribeVpcs'],
      Resource: ['*'],
    },
    {
      Effect: 'Allow',
      Action: ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
      Resource: [
        { 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:network-interface/*' },
        { 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:subnet/*' },
        { 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:security-group/*' },
      ],
    },
  ];
  if (process.env.SLUICE_KAFKA_TRIGGER === 'self-managed') {
    // The event source mapping reads the SCRAM credentials with the function's role.
    statements.push({ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: ['${param:kafkaScramSecretArn}'] });
  }

  // The functions' own role: the framework's default role would add its own MSK statements,
  // with unscoped EC2 resources.
  const logStreams = { 'Fn::Sub': `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${service}-*:*` };
  const role = {
    Type: 'AWS::IAM::Role',
    Properties: {
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] }],
      },
      Policies: [
        {
          PolicyName: `${plan.pipeline}-functions`,
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: [logStreams] },
              ...statements,
            ],
          },
        },
      ],
    },
  };

  return {
    pipeline: plan.pipeline,
    functions,
    role,
    alias: { 'sluice-pipeline': path.resolve(process.env.SLUICE_PIPELINE_FILE || DEFAULT_PIPELINE) },
  };
};
