// What serverless.yml deploys for one pipeline, computed from its plan: a processor function
// per stage with its MSK (or self-managed Kafka) trigger, the coordinator on a schedule, the
// commit function, a least-privilege IAM role for each function (scoped to this pipeline's
// own table, bucket, cluster, topics, groups, transactional ids and functions, and to what
// that function does), the alarms and a dashboard. The state table and snapshot bucket are in
// infra/resources.yml. The pipeline file is SLUICE_PIPELINE_FILE, which `sluice deploy` sets.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** A module of Sluice's: its sources in a checkout of Sluice, its build in the installed package. */
function sluiceModule(folder, name) {
  const sources = path.join(__dirname, '..', 'lib', folder, `${name}.ts`);
  return fs.existsSync(sources) ? sources : path.join(__dirname, '..', 'dist', folder, `${name}.js`);
}

function planModule(name) {
  return sluiceModule('plan', name);
}

/** The pipeline file's environment: a TypeScript module's default export, or a `.sql` script planned. */
async function loadPipelineEnvironment(file, here, tsImport) {
  const { isSqlPipelineFile, loadSqlPipeline } = await tsImport(sluiceModule('sql', 'pipeline-file'), here);
  return isSqlPipelineFile(file) ? loadSqlPipeline(path.resolve(file)) : (await tsImport(path.resolve(file), here)).default;
}

/** The pipeline's plan under the deployment stage's names, and the plan helpers this file uses. */
async function loadPlan(file, deploymentStage) {
  if (!file) throw new Error('SLUICE_PIPELINE_FILE is not set: deploy with sluice deploy <pipeline-file>, which sets it');
  const { tsImport } = await import('tsx/esm/api');
  const here = path.join(__dirname, 'serverless.cjs');
  const pipeline = await loadPipelineEnvironment(file, here, tsImport);
  const { assertDeployable, planPipeline } = await tsImport(planModule('planner'), here);
  const { triggerStartingPosition } = await tsImport(planModule('trigger-position'), here);
  const names = await tsImport(planModule('names'), here);
  return { plan: assertDeployable(planPipeline(pipeline, { deploymentStage })), triggerStartingPosition, names };
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

function sinkTopics(stage) {
  return stage.nodes.flatMap((node) => (node.role === 'sink' ? [node.transformation.sink.config.serializer.topic ?? '*'] : []));
}

/** Alarm periods: CloudWatch's 5-minute basic resolution. */
const ALARM_PERIOD_S = 300;

/**
 * What pages the operator, through the SNS topic `AlarmTopic`: a function failing for 15
 * minutes (a bad record under `fail()`, a missing topic, lost access), a lost transaction, no
 * checkpoint completed for three intervals (at least 15 minutes), and an input falling behind.
 */
function alarms(plan, service, functionKeys, processorKeys) {
  const alarm = (description, properties) => ({
    Type: 'AWS::CloudWatch::Alarm',
    Properties: { AlarmDescription: `Sluice ${plan.pipeline}: ${description}`, AlarmActions: [{ Ref: 'AlarmTopic' }], OKActions: [{ Ref: 'AlarmTopic' }], ...properties },
  });
  const lambdaMetric = (key, metricName, statistic) => ({
    Namespace: 'AWS/Lambda',
    MetricName: metricName,
    Dimensions: [{ Name: 'FunctionName', Value: `${service}-${key}` }],
    Statistic: statistic,
    Period: ALARM_PERIOD_S,
  });
  const sluiceMetric = (metricName) => ({
    Namespace: 'Sluice',
    MetricName: metricName,
    Dimensions: [{ Name: 'service', Value: service }],
    Statistic: 'Sum',
    Period: ALARM_PERIOD_S,
  });
  const resources = {
    AlarmTopic: { Type: 'AWS::SNS::Topic', Properties: { DisplayName: `Sluice ${plan.pipeline} alarms`, KmsMasterKeyId: 'alias/aws/sns' } },
  };
  const title = (key) => `${key.charAt(0).toUpperCase()}${key.slice(1)}`;
  for (const key of functionKeys) {
    resources[`${title(key)}ErrorsAlarm`] = alarm(`${key} has failed in each of the last 15 minutes; its logs say why`, {
      ...lambdaMetric(key, 'Errors', 'Sum'),
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
  }
  for (const key of processorKeys) {
    resources[`${title(key)}OffsetLagAlarm`] = alarm(`${key}'s input is more than \${param:alarmOffsetLag} records behind`, {
      ...lambdaMetric(key, 'OffsetLag', 'Maximum'),
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: '${param:alarmOffsetLag}',
      EvaluationPeriods: 3,
      TreatMissingData: 'notBreaching',
    });
  }
  for (const stage of plan.stages) {
    resources[`${title(functionKey(stage.id))}ShardsStoppedAlarm`] = alarm(
      `a shard of ${stage.id} has stopped at a record that kept failing (BadRecordPolicy.fail); fix it, deploy, then sluice resume`,
      {
        ...sluiceMetric('ShardsStopped'),
        Dimensions: [...sluiceMetric('ShardsStopped').Dimensions, { Name: 'stage', Value: stage.id }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      },
    );
  }
  resources.TransactionsLostAlarm = alarm('a Kafka transaction was lost; its shard rolls back and replays, so check why (its timeout, a fenced producer)', {
    ...sluiceMetric('TransactionsLost'),
    ComparisonOperator: 'GreaterThanThreshold',
    Threshold: 0,
    EvaluationPeriods: 1,
    TreatMissingData: 'notBreaching',
  });
  // The age of the latest completed checkpoint, which every awake coordinator invocation reports;
  // a resting pipeline reports none and completes none, and is not stalled.
  const stalledMs = Math.max(3 * plan.checkpointing.intervalMs, 3 * ALARM_PERIOD_S * 1000);
  resources.CheckpointsStalledAlarm = alarm(`no checkpoint completed in ${stalledMs / 60_000} minutes though the pipeline is awake; exactly-once output waits for one`, {
    ...sluiceMetric('CheckpointAge'),
    Statistic: 'Maximum',
    ComparisonOperator: 'GreaterThanThreshold',
    Threshold: stalledMs,
    EvaluationPeriods: 1,
    TreatMissingData: 'notBreaching',
  });
  return resources;
}

/**
 * One CloudWatch dashboard for the pipeline: records in and out and batch latency per stage,
 * each processor's offset lag, checkpoints, transactions, dropped records, and every
 * function's errors and duration.
 */
function dashboard(plan, service, functionKeys, processorKeys) {
  const perStage = (metricName, stat) => plan.stages.map((stage) => ['Sluice', metricName, 'service', service, 'stage', stage.id, { stat, label: `${stage.id} ${metricName}` }]);
  const perFunction = (keys, metricName, stat) => keys.map((key) => ['AWS/Lambda', metricName, 'FunctionName', `${service}-${key}`, { stat, label: key }]);
  const ofService = (metricName, stat) => ['Sluice', metricName, 'service', service, { stat }];
  const widgets = [
    ['Records in and out', [...perStage('RecordsIn', 'Sum'), ...perStage('RecordsOut', 'Sum')]],
    ['Offset lag (records behind)', perFunction(processorKeys, 'OffsetLag', 'Maximum')],
    ['Batch latency p99 (ms)', perStage('BatchLatency', 'p99')],
    ['Checkpoints', [ofService('CheckpointsCompleted', 'Sum'), ofService('CheckpointDuration', 'Maximum')]],
    ['Transactions', [ofService('TransactionsCommitted', 'Sum'), ofService('TransactionsLost', 'Sum')]],
    ['Records dropped', [...perStage('LateRecordsDropped', 'Sum'), ...perStage('BadRecordsSkipped', 'Sum'), ...perStage('BadRecordsDeadLettered', 'Sum')]],
    ['Shards stopped at a failing record', perStage('ShardsStopped', 'Maximum')],
    ['Function errors', perFunction(functionKeys, 'Errors', 'Sum')],
    ['Function duration p99 (ms)', perFunction(functionKeys, 'Duration', 'p99')],
  ].map(([title, metrics], index) => ({
    type: 'metric',
    x: (index % 2) * 12,
    y: Math.floor(index / 2) * 6,
    width: 12,
    height: 6,
    properties: { title, metrics, region: '${AWS::Region}', period: ALARM_PERIOD_S, view: 'timeSeries', stacked: false },
  }));
  return {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: { DashboardName: service, DashboardBody: { 'Fn::Sub': JSON.stringify({ widgets }) } },
  };
}

/**
 * A stage's trigger: Amazon MSK by default; with SLUICE_KAFKA_TRIGGER=self-managed, a
 * self-managed Kafka event source (bootstrap servers, SASL/SCRAM credentials from Secrets
 * Manager, the VPC to reach the brokers from). Its batching is the pipeline's
 * (`env.setEventSourceMapping`) unless `--param` names it; a source stage starts where its
 * source's offsets initializer does.
 */
function trigger({ topic, consumerGroupId, startingPosition, batching, scram, serverRootCa }) {
  const common = {
    topic,
    batchSize: batching.batchSize ?? '${param:batchSize}',
    maximumBatchingWindow: batching.maximumBatchingWindowSeconds ?? '${param:batchingWindowSeconds}',
    ...startingPosition,
    consumerGroupId,
    enabled: true,
    ...(batching.provisionedPollers
      ? { provisionedPollerConfig: { minimumPollers: batching.provisionedPollers.minimum, maximumPollers: batching.provisionedPollers.maximum } }
      : {}),
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
          ...(serverRootCa ? { serverRootCaCertificate: [serverRootCa] } : {}),
        },
      },
    };
  }
  return { msk: { arn: '${param:mskClusterArn}', ...common, ...(scram ? { saslScram512: '${param:kafkaScramSecretArn}' } : {}) } };
}

/** The `--param name=value` given on the command line, if any. */
function commandLineParam(options, name) {
  const pattern = new RegExp(`^${name}=(.*)$`);
  return [options.param ?? []].flat().map((param) => pattern.exec(param)?.[1]).find((value) => value !== undefined);
}

/**
 * Whether the functions and the triggers authenticate with SASL/SCRAM: `--param kafkaAuth=SCRAM`,
 * which a self-managed trigger needs (it authenticates so). The credentials stay in the secret.
 * Read from the command line: this file names the service, so `param:` cannot be resolved yet.
 */
function scramFrom(options) {
  const kafkaAuth = commandLineParam(options, 'kafkaAuth') ?? 'IAM';
  const scram = kafkaAuth.toUpperCase() === 'SCRAM';
  if (process.env.SLUICE_KAFKA_TRIGGER === 'self-managed' && !scram) {
    throw new Error('A self-managed Kafka trigger authenticates with SASL/SCRAM: add --param kafkaAuth=SCRAM so that the functions do too');
  }
  return scram;
}

/**
 * `--param kafkaServerRootCaSecretArn=arn:…`: the Secrets Manager secret of the certificate
 * authority a self-managed cluster's certificates chain to, which its triggers verify the
 * brokers with (the functions take the PEM file itself, `--param kafkaTlsCaFile`). MSK's chain to
 * Amazon's, which Lambda trusts.
 */
function serverRootCaFrom(options) {
  const secretArn = commandLineParam(options, 'kafkaServerRootCaSecretArn');
  if (secretArn && process.env.SLUICE_KAFKA_TRIGGER !== 'self-managed') {
    throw new Error('--param kafkaServerRootCaSecretArn is for self-managed Kafka triggers (SLUICE_KAFKA_TRIGGER=self-managed): MSK brokers need none');
  }
  return secretArn;
}

/**
 * The schema registries the processors' registry formats use (lib/aws/schema-registry.ts):
 * `--param schemaRegistryUrl=https://…`, and `--param schemaRegistrySecretArn=arn:…` for the
 * Secrets Manager secret of its credentials, which only the processors may read; and
 * `--param glueSchemaRegistryName=…` for an AWS Glue registry, whose schemas only the processors
 * may read, create and add versions to.
 */
function schemaRegistryFrom(options) {
  const url = commandLineParam(options, 'schemaRegistryUrl');
  const secretArn = commandLineParam(options, 'schemaRegistrySecretArn');
  const glueRegistry = commandLineParam(options, 'glueSchemaRegistryName');
  if (secretArn && !url) {
    throw new Error('--param schemaRegistrySecretArn needs --param schemaRegistryUrl too: the secret holds the credentials of that registry');
  }
  const glueArn = (resource) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:glue:\${AWS::Region}:\${AWS::AccountId}:${resource}` });
  return {
    environment: {
      ...(url ? { SCHEMA_REGISTRY_URL: url } : {}),
      ...(secretArn ? { SCHEMA_REGISTRY_SECRET_ARN: secretArn } : {}),
      ...(glueRegistry ? { GLUE_SCHEMA_REGISTRY_NAME: glueRegistry } : {}),
    },
    statements: [
      ...(secretArn ? [{ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: [secretArn] }] : []),
      ...(glueRegistry
        ? [
            {
              Effect: 'Allow',
              Action: ['glue:GetSchemaVersion', 'glue:GetSchemaByDefinition', 'glue:RegisterSchemaVersion', 'glue:CreateSchema'],
              Resource: [glueArn(`registry/${glueRegistry}`), glueArn(`schema/${glueRegistry}/*`)],
            },
          ]
        : []),
    ],
  };
}

module.exports = async ({ options }) => {
  // The stage as provider.stage resolves it: `--stage`, else dev.
  const { plan, triggerStartingPosition, names } = await loadPlan(process.env.SLUICE_PIPELINE_FILE, options.stage ?? 'dev');
  const scram = scramFrom(options);
  const serverRootCa = serverRootCaFrom(options);
  const registry = schemaRegistryFrom(options);
  const { batchSize, maximumBatchingWindowSeconds, provisionedPollers } = plan.eventSourceMapping;
  const batching = {
    ...(commandLineParam(options, 'batchSize') === undefined && batchSize !== undefined ? { batchSize } : {}),
    ...(commandLineParam(options, 'batchingWindowSeconds') === undefined && maximumBatchingWindowSeconds !== undefined ? { maximumBatchingWindowSeconds } : {}),
    ...(provisionedPollers ? { provisionedPollers } : {}),
  };
  const startingPositionOf = (stage) =>
    stage.input.kind === 'source' ? triggerStartingPosition(stage.input.source.source.config.startingOffsets, Date.now()) : { startingPosition: 'TRIM_HORIZON' };
  const service = '${self:service}-${sls:stage}';
  const kafkaArn = (kind, name) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:kafka:\${AWS::Region}:\${AWS::AccountId}:${kind}/\${param:mskClusterName}/\${param:mskClusterUuid}/${name}` });

  const functions = {};
  const processorNames = {};
  const coordinatorRule = `${service}-coordinator`;
  for (const stage of plan.stages) {
    const key = functionKey(`processor-${stage.id}`);
    processorNames[stage.id] = `${service}-${key}`;
    functions[key] = {
      handler: 'functions/processor.handler',
      description: `Sluice ${plan.pipeline}: processes ${stage.id} (${stageTopics(stage).join(', ')})`,
      // The coordinator, which a batch calls when it finds the pipeline resting (lib/runtime/quiescence.ts).
      environment: { SLUICE_STAGE: stage.id, SLUICE_COORDINATOR_FUNCTION: `${service}-coordinator`, ...registry.environment },
      events: stageTopics(stage).map((topic) =>
        trigger({ topic, consumerGroupId: names.consumerGroupOf(plan, stage), startingPosition: startingPositionOf(stage), batching, scram, serverRootCa }),
      ),
    };
  }
  const commitKey = 'commit';
  functions.coordinator = {
    handler: 'functions/coordinator.handler',
    description: `Sluice ${plan.pipeline}: triggers and completes checkpoints, ticks idle shards`,
    environment: {
      SLUICE_PROCESSOR_FUNCTIONS: JSON.stringify(processorNames),
      SLUICE_COMMIT_FUNCTION: `${service}-${commitKey}`,
      // Turned off while the pipeline rests, so that no function runs (docs/PROTOCOL.md, "At rest").
      SLUICE_COORDINATOR_RULE: coordinatorRule,
    },
    // Each invocation runs the coordinator for 55 s (lib/aws/lambda-runtime.ts), so that
    // checkpoints are triggered and completed within a second of their time.
    events: [{ schedule: { rate: 'rate(1 minute)', name: coordinatorRule } }],
    timeout: 70,
    memorySize: 256,
  };
  functions[commitKey] = {
    handler: 'functions/commit.handler',
    description: `Sluice ${plan.pipeline}: commits the Kafka transactions of completed checkpoints`,
  };

  const writtenBy = (stage) => [
    ...sinkTopics(stage),
    ...stage.nodes.flatMap((node) => (node.role === 'repartition' ? [node.topic] : [])),
    ...(plan.badRecordPolicy.kind === 'dead-letter' ? [plan.badRecordPolicy.topic] : []),
  ];
  const inputTopics = [...new Set(plan.stages.flatMap(stageTopics))];
  const deploymentsTopic = names.deploymentsTopicName(plan);
  const outputTopics = [...new Set(plan.stages.flatMap(writtenBy))];
  const topicArns = (topics) => [...new Set(topics)].map((topic) => kafkaArn('topic', topic));
  const functionArn = (name) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:lambda:\${AWS::Region}:\${AWS::AccountId}:function:${name}` });
  const snapshotObjects = (actions) => ({ Effect: 'Allow', Action: actions, Resource: [{ 'Fn::Sub': `\${SnapshotBucket.Arn}/${plan.pipeline}/*` }] });
  const snapshotListing = {
    Effect: 'Allow',
    Action: ['s3:ListBucket'],
    Resource: [{ 'Fn::GetAtt': ['SnapshotBucket', 'Arn'] }],
    Condition: { StringLike: { 's3:prefix': [`${plan.pipeline}/*`] } },
  };
  const describeTopics = (topics) => ({ Effect: 'Allow', Action: ['kafka-cluster:DescribeTopic'], Resource: topicArns(topics) });
  // Every function: its table, the cluster, and the network interfaces of a function in a VPC.
  const common = [
    { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:BatchGetItem'], Resource: [{ 'Fn::GetAtt': ['StateTable', 'Arn'] }] },
    { Effect: 'Allow', Action: ['kafka-cluster:Connect', 'kafka-cluster:DescribeCluster'], Resource: ['${param:mskClusterArn}'] },
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
  // The functions read the SCRAM credentials once per container (lib/aws/kafka-secret.ts), and
  // the event source mapping with the processor's role; Amazon MSK requires the secret to be
  // encrypted with a customer managed key.
  const scramSecret = scram
    ? [
        { Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: ['${param:kafkaScramSecretArn}'] },
        { Effect: 'Allow', Action: ['kms:Decrypt'], Resource: ['${param:kafkaScramKmsKeyArn}'] },
      ]
    : [];
  if (scram) for (const fn of Object.values(functions)) fn.environment = { ...fn.environment, KAFKA_SASL_SECRET_ARN: '${param:kafkaScramSecretArn}' };
  const roleOf = (key, statements) => ({
    Type: 'AWS::IAM::Role',
    Properties: {
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] }],
      },
      Policies: [
        {
          PolicyName: `${plan.pipeline}-${key}`,
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
                Resource: [{ 'Fn::Sub': `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${service}-${key}:*` }],
              },
              ...common,
              ...scramSecret,
              ...statements,
            ],
          },
        },
      ],
    },
  });
  const roleId = (key) => `${key.charAt(0).toUpperCase()}${key.slice(1)}Role`;
  // A Sub rather than a GetAtt: for a GetAtt the framework adds a DependsOn on the role as
  // well, which cfn-lint warns of (W3005); the reference alone orders the role first.
  const roleArn = (key) => ({ 'Fn::Sub': `\${${roleId(key)}.Arn}` });

  // One role per function, each with only what that function does (docs/PROTOCOL.md names who does what).
  const resources = {};
  for (const stage of plan.stages) {
    const key = functionKey(`processor-${stage.id}`);
    resources[roleId(key)] = roleOf(key, [
      // Deltas written, and a rollback's manifest and deltas read.
      snapshotObjects(['s3:GetObject', 's3:PutObject']),
      snapshotListing,
      // Its input, and the coordinators' word on which deployment runs (lib/runtime/deployment-claim.ts).
      { Effect: 'Allow', Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'], Resource: topicArns([...stageTopics(stage), deploymentsTopic]) },
      {
        Effect: 'Allow',
        // DescribeTopicDynamicConfiguration: the retention, timestamp and size settings of the
        // topics it writes (lib/runtime/output-limits.ts).
        Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:DescribeTopicDynamicConfiguration', 'kafka-cluster:WriteData'],
        Resource: topicArns(writtenBy(stage)),
      },
      // The trigger's group; and the group the source names, whose offsets committedOffsets() starts from.
      { Effect: 'Allow', Action: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'], Resource: [kafkaArn('group', names.consumerGroupOf(plan, stage))] },
      ...(stage.input.kind === 'source'
        ? [{ Effect: 'Allow', Action: ['kafka-cluster:DescribeGroup'], Resource: [kafkaArn('group', stage.input.source.source.config.groupId)] }]
        : []),
      {
        Effect: 'Allow',
        Action: ['kafka-cluster:DescribeTransactionalId', 'kafka-cluster:AlterTransactionalId'],
        Resource: [kafkaArn('transactional-id', `${names.transactionalIdPrefixOf(plan, stage)}-*`)],
      },
      // A batch that finds the pipeline resting calls the coordinator, and nothing else.
      { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: [functionArn(`${service}-coordinator`)] },
      // What Lambda's MSK event source mapping needs on the function's role.
      { Effect: 'Allow', Action: ['kafka:DescribeCluster', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers'], Resource: ['${param:mskClusterArn}'] },
      // The trigger reads the certificate authority's secret with the processor's role.
      ...(serverRootCa ? [{ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: [serverRootCa] }] : []),
      ...registry.statements,
    ]);
    functions[key].role = roleArn(key);
  }
  resources[roleId('coordinator')] = roleOf('coordinator', [
    // Checkpoint manifests written and read.
    snapshotObjects(['s3:GetObject', 's3:PutObject']),
    snapshotListing,
    // The shards: every input topic's partitions.
    describeTopics(inputTopics),
    // Which deployment of these names runs: this one's heartbeats, and the others'.
    {
      Effect: 'Allow',
      Action: ['kafka-cluster:CreateTopic', 'kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData', 'kafka-cluster:ReadData'],
      Resource: topicArns([deploymentsTopic]),
    },
    { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: [...Object.values(processorNames), `${service}-${commitKey}`].map(functionArn) },
    // Its own schedule, off while the pipeline rests.
    {
      Effect: 'Allow',
      Action: ['events:DisableRule', 'events:EnableRule'],
      Resource: [{ 'Fn::Sub': `arn:\${AWS::Partition}:events:\${AWS::Region}:\${AWS::AccountId}:rule/${coordinatorRule}` }],
    },
  ]);
  functions.coordinator.role = roleArn('coordinator');
  resources[roleId(commitKey)] = roleOf(commitKey, [
    describeTopics(inputTopics),
    // ReadData: a fenced transaction's first record read back, to tell a committed transaction
    // from a lost one (lib/kafka/committer.ts).
    { Effect: 'Allow', Action: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'], Resource: topicArns(outputTopics) },
    {
      Effect: 'Allow',
      Action: ['kafka-cluster:DescribeTransactionalId', 'kafka-cluster:AlterTransactionalId'],
      Resource: plan.stages.map((stage) => kafkaArn('transactional-id', `${names.transactionalIdPrefixOf(plan, stage)}-*`)),
    },
  ]);
  functions[commitKey].role = roleArn(commitKey);
  for (const fn of Object.values(functions)) {
    // Source maps stay out of the zips (infra/source-maps.cjs keeps them beside).
    fn.package = { patterns: ['!functions/*.map'] };
    // What tells this deployment from another of the same names on the cluster (lib/runtime/deployment-claim.ts).
    fn.environment = { ...fn.environment, SLUICE_DEPLOYMENT_ID: { 'Fn::Sub': '${AWS::AccountId}:${AWS::Region}:${AWS::StackName}' } };
  }
  const processorKeys = Object.keys(processorNames).map((id) => functionKey(`processor-${id}`));
  Object.assign(resources, alarms(plan, service, Object.keys(functions), processorKeys));
  resources.Dashboard = dashboard(plan, service, Object.keys(functions), processorKeys);

  return {
    pipeline: plan.pipeline,
    functions,
    resources,
  };
};
