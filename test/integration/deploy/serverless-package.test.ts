// `sluice deploy --package-only` (osls, no AWS credentials, no network) for the seed pipeline and
// a two-stage pipeline: the template passes cfn-lint with no errors and no warnings, deploys one processor
// per stage with its MSK trigger, the coordinator on a schedule and the commit function on
// nodejs22.x/arm64 bundles, and every IAM statement is scoped: no wildcard actions, and no "*"
// resource except for the EC2 Describe actions, which AWS does not let one scope. Each function
// has a role of its own, and the alarms go to one SNS topic.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { sluice } from '../../helpers/cli.js';
import { ofType, run, usePackaging, type Template } from '../../helpers/serverless-package.js';

const packageFor = usePackaging();

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const UNSCOPABLE = new Set(['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups', 'ec2:DescribeVpcs']);

describe('sluice deploy --package-only', () => {
  it('packages the seed pipeline: lint-clean template, scoped IAM, small arm64 bundles', async () => {
    const { folder, template } = await packageFor('examples/order-aggregation.ts');

    // cfn-lint's exit code is a bit mask: 2 errors, 4 warnings, 8 informational.
    const lint = await run(join(inject('pythonTools').bin, 'cfn-lint'), [join(folder, 'cloudformation-template-update-stack.json')]).then(
      () => ({ code: 0, output: '' }),
      (error: unknown) => ({ code: (error as { code?: number }).code ?? 2, output: (error as { stdout?: string }).stdout ?? String(error) }),
    );
    expect(lint.code & 6, lint.output).toBe(0);

    const functions = ofType(template, 'AWS::Lambda::Function');
    expect(functions.map(([name]) => name).sort()).toEqual([
      'CommitLambdaFunction',
      'CoordinatorLambdaFunction',
      'Processorstage1LambdaFunction',
      'Processorstage2LambdaFunction',
    ]);
    for (const [, fn] of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
    }
    const [mapping, repartitionMapping] = ofType(template, 'AWS::Lambda::EventSourceMapping');
    expect(mapping?.[1].Properties).toMatchObject({
      Topics: ['orders'],
      StartingPosition: 'TRIM_HORIZON',
      // Batches grow with the rate up to Lambda's largest, and wait at most a second.
      BatchSize: 10000,
      MaximumBatchingWindowInSeconds: 1,
      AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: 'order-aggregation-dev' },
    });
    expect(repartitionMapping?.[1].Properties).toMatchObject({ Topics: ['order-aggregation-dev-keyBy-repartition'] });
    expect(ofType(template, 'AWS::Events::Rule')[0]?.[1].Properties.ScheduleExpression).toBe('rate(1 minute)');
    // The coordinator runs for 55 s of each minute: its timeout leaves room, its memory is small.
    expect(functions.find(([name]) => name === 'CoordinatorLambdaFunction')?.[1].Properties).toMatchObject({ Timeout: 70, MemorySize: 256 });
    // Each zip holds its minified bundle alone; the source maps are kept beside the zips.
    const python = inject('pythonTools').python;
    for (const name of ['processorstage1', 'processorstage2', 'coordinator', 'commit']) {
      const size = statSync(join(folder, `${name}.zip`)).size;
      expect(size, `${name}.zip`).toBeLessThan(1024 * 1024);
      const { stdout: listing } = await run(python, ['-m', 'zipfile', '-l', join(folder, `${name}.zip`)]);
      expect(listing.split('\n').slice(1).filter(Boolean).map((line) => line.split(/\s+/)[0]), `${name}.zip`).toEqual([
        `functions/${name.startsWith('processor') ? 'processor' : name}.mjs`,
      ]);
    }
    expect(readdirSync(join(folder, 'sourcemaps', 'functions')).sort()).toEqual(['commit.mjs.map', 'coordinator.mjs.map', 'processor.mjs.map']);
    for (const [, fn] of functions) expect(JSON.stringify(fn.Properties.Environment), 'no --enable-source-maps without maps').not.toContain('NODE_OPTIONS');
    // A failure of the shipped code reads back to the sources with the kept maps.
    const unzipped = join(folder, 'processor');
    await run(python, ['-m', 'zipfile', '-e', join(folder, 'processorstage1.zip'), unzipped]);
    const failed = spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(join(unzipped, 'functions', 'processor.mjs'))})`], {
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    });
    expect(failed.stderr).toContain('SLUICE_STAGE is not set');
    expect(failed.stderr).toMatch(/at requiredEnvironment \(file:.*functions\/processor\.mjs:\d+:\d+\)/);
    const read = spawnSync(process.execPath, ['bin/sluice.js', 'symbolicate', join(folder, 'sourcemaps')], { input: failed.stderr, encoding: 'utf8' });
    expect(read.stdout).toMatch(/at requiredEnvironment \(lib\/aws\/environment\.ts:\d+:\d+\)/);
    expect(read.stdout).toMatch(/at functions\/processor\.ts:\d+:\d+/);

    const table = ofType(template, 'AWS::DynamoDB::Table')[0]?.[1].Properties;
    expect(table).toMatchObject({ BillingMode: 'PAY_PER_REQUEST', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, SSESpecification: { SSEEnabled: true } });
    const bucket = ofType(template, 'AWS::S3::Bucket').find(([name]) => name === 'SnapshotBucket')?.[1].Properties;
    expect(bucket).toMatchObject({
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    expect(JSON.stringify(bucket)).toContain('checkpoints/');
    const created = JSON.parse(readFileSync(join(folder, 'cloudformation-template-create-stack.json'), 'utf8')) as Template;
    expect(ofType(created, 'AWS::S3::Bucket')[0]?.[1].Properties, 'the deployment bucket').toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });

    const statements = ofType(template, 'AWS::IAM::Role').flatMap(([, role]) =>
      (role.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap((p) => p.PolicyDocument.Statement),
    );
    expect(statements.length).toBeGreaterThan(8);
    for (const statement of statements) {
      const actions = [statement.Action].flat();
      for (const action of actions) expect(action, 'no wildcard action').not.toMatch(/\*/);
      const resources = [statement.Resource].flat();
      if (resources.includes('*')) expect(actions.every((a) => UNSCOPABLE.has(a)), JSON.stringify(statement)).toBe(true);
    }
    const text = JSON.stringify(statements);
    expect(text).toContain('topic/sluice/11111111-2222-3333-4444-555555555555-1/orders');
    expect(text).toContain('topic/sluice/11111111-2222-3333-4444-555555555555-1/order-aggregates');
    expect(text).toContain('topic/sluice/11111111-2222-3333-4444-555555555555-1/order-aggregation-dev-keyBy-repartition');
    expect(text).toContain('transactional-id/sluice/11111111-2222-3333-4444-555555555555-1/order-aggregation-tx-dev-stage-2-*');

    // A role per function, with only what that function does.
    const roles = new Map(ofType(template, 'AWS::IAM::Role'));
    const statementsOf = (functionName: string) => {
      const role = functions.find(([name]) => name === functionName)?.[1].Properties.Role as { 'Fn::Sub': string };
      const policies = roles.get(/^\$\{(\w+)\.Arn\}$/.exec(role['Fn::Sub'])?.[1] ?? '')?.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[];
      return policies.flatMap((p) => p.PolicyDocument.Statement);
    };
    const allowed = (functionName: string, action: string) =>
      statementsOf(functionName).filter((statement) => [statement.Action].flat().includes(action)).flatMap((statement) => [statement.Resource].flat()).map((r) => JSON.stringify(r));
    expect(roles.size).toBe(4);
    expect(new Set(functions.map(([, fn]) => JSON.stringify(fn.Properties.Role))).size, 'no two functions share a role').toBe(4);
    expect(allowed('CoordinatorLambdaFunction', 'lambda:InvokeFunction').join()).toContain('processorstage2');
    for (const fn of ['Processorstage1LambdaFunction', 'Processorstage2LambdaFunction']) {
      expect(allowed(fn, 'lambda:InvokeFunction'), `${fn} invokes only the coordinator, which rests`).toEqual([
        JSON.stringify({ 'Fn::Sub': 'arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:sluice-order-aggregation-dev-coordinator' }),
      ]);
    }
    expect(allowed('CommitLambdaFunction', 'lambda:InvokeFunction'), 'the commit function invokes nothing').toEqual([]);
    // The coordinator turns its own schedule off while the pipeline rests, and on again.
    expect(allowed('CoordinatorLambdaFunction', 'events:DisableRule').join()).toContain(':rule/sluice-order-aggregation-dev-coordinator');
    expect(allowed('Processorstage1LambdaFunction', 'events:EnableRule')).toEqual([]);
    expect(ofType(template, 'AWS::Events::Rule')[0]?.[1].Properties.Name).toBe('sluice-order-aggregation-dev-coordinator');
    expect(allowed('Processorstage1LambdaFunction', 'kafka-cluster:WriteData').join()).toContain('order-aggregation-dev-keyBy-repartition');
    expect(allowed('Processorstage1LambdaFunction', 'kafka-cluster:WriteData').join()).not.toContain('order-aggregates');
    expect(allowed('Processorstage2LambdaFunction', 'kafka-cluster:WriteData').join()).toContain('/order-aggregates');
    expect(allowed('Processorstage2LambdaFunction', 'kafka-cluster:DescribeTopicDynamicConfiguration').join(), 'the output topics’ limits are read').toContain('/order-aggregates');
    expect(allowed('Processorstage2LambdaFunction', 'kafka-cluster:AlterTransactionalId').join()).toContain('order-aggregation-tx-dev-stage-2-*');
    expect(allowed('CommitLambdaFunction', 'kafka-cluster:WriteData'), 'the commit function writes no record').toEqual([]);
    expect(allowed('CommitLambdaFunction', 'kafka-cluster:ReadData').join(), 'a fenced transaction’s first record is read back').toContain('/order-aggregates');
    expect(allowed('CommitLambdaFunction', 's3:PutObject')).toEqual([]);
    // Which deployment of these names runs: the coordinator says so on its topic, the processors read it.
    expect(allowed('CoordinatorLambdaFunction', 'kafka-cluster:CreateTopic').join()).toContain('/order-aggregation-dev-deployments');
    expect(allowed('Processorstage2LambdaFunction', 'kafka-cluster:ReadData').join()).toContain('/order-aggregation-dev-deployments');
    for (const [, fn] of functions) {
      expect(fn.Properties.Environment).toMatchObject({
        Variables: { SLUICE_DEPLOYMENT_STAGE: 'dev', SLUICE_DEPLOYMENT_ID: { 'Fn::Sub': '${AWS::AccountId}:${AWS::Region}:${AWS::StackName}' } },
      });
    }

    // Alarms, each sent to the pipeline's SNS topic.
    const alarms = ofType(template, 'AWS::CloudWatch::Alarm');
    expect(alarms.map(([name]) => name).sort()).toEqual([
      'CheckpointsStalledAlarm',
      'CommitErrorsAlarm',
      'CoordinatorErrorsAlarm',
      'Processorstage1ErrorsAlarm',
      'Processorstage1OffsetLagAlarm',
      'Processorstage2ErrorsAlarm',
      'Processorstage2OffsetLagAlarm',
      'Stage1ShardsStoppedAlarm',
      'Stage2ShardsStoppedAlarm',
      'TransactionsLostAlarm',
    ]);
    for (const [, alarm] of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
    // A resting pipeline completes no checkpoint and is not stalled: the alarm watches the age awake coordinators report.
    expect(alarms.find(([name]) => name === 'CheckpointsStalledAlarm')?.[1].Properties).toMatchObject({
      Namespace: 'Sluice',
      MetricName: 'CheckpointAge',
      Dimensions: [{ Name: 'service', Value: 'sluice-order-aggregation-dev' }],
      Threshold: 900_000,
      TreatMissingData: 'notBreaching',
    });
    expect(alarms.find(([name]) => name === 'Stage2ShardsStoppedAlarm')?.[1].Properties).toMatchObject({
      MetricName: 'ShardsStopped',
      Dimensions: [
        { Name: 'service', Value: 'sluice-order-aggregation-dev' },
        { Name: 'stage', Value: 'stage-2' },
      ],
    });
    expect(functions[0]?.[1].Properties.Environment).toMatchObject({ Variables: { POWERTOOLS_SERVICE_NAME: 'sluice-order-aggregation-dev' } });

    // A dashboard of the metrics the alarms watch, and more.
    const dashboard = ofType(template, 'AWS::CloudWatch::Dashboard')[0]?.[1].Properties;
    const body = JSON.parse((dashboard?.DashboardBody as { 'Fn::Sub': string })['Fn::Sub']) as {
      widgets: { properties: { title: string; region: string; metrics: unknown[][] } }[];
    };
    const widget = (title: string) => body.widgets.find((w) => w.properties.title === title)?.properties;
    expect(body.widgets.map((w) => w.properties.title)).toEqual([
      'Records in and out',
      'Offset lag (records behind)',
      'Batch latency p99 (ms)',
      'Checkpoints',
      'Transactions',
      'Records dropped',
      'Shards stopped at a failing record',
      'Function errors',
      'Function duration p99 (ms)',
    ]);
    expect(widget('Records in and out')?.region).toBe('${AWS::Region}');
    expect(widget('Offset lag (records behind)')?.metrics.map((m) => m.slice(0, 4))).toEqual([
      ['AWS/Lambda', 'OffsetLag', 'FunctionName', 'sluice-order-aggregation-dev-processorstage1'],
      ['AWS/Lambda', 'OffsetLag', 'FunctionName', 'sluice-order-aggregation-dev-processorstage2'],
    ]);
    expect(widget('Records in and out')?.metrics[0]?.slice(0, 6)).toEqual(['Sluice', 'RecordsIn', 'service', 'sluice-order-aggregation-dev', 'stage', 'stage-1']);
    expect(widget('Function errors')?.metrics).toHaveLength(4);
  }, 300_000);

  it('packages a SQL pipeline as it does a TypeScript one, the script planned in the bundle', async () => {
    const { folder, template } = await packageFor('examples/order-aggregation.sql');
    const mappings = ofType(template, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    expect(mappings.map((m) => m.Topics)).toEqual([['orders'], ['order-aggregation-sql-dev-keyBy-repartition']]);
    const python = inject('pythonTools').python;
    const unzipped = join(folder, 'sql-processor');
    await run(python, ['-m', 'zipfile', '-e', join(folder, 'processorstage2.zip'), unzipped]);
    expect(statSync(join(folder, 'processorstage2.zip')).size).toBeLessThan(1024 * 1024);
    expect(readFileSync(join(unzipped, 'functions', 'processor.mjs'), 'utf8')).toContain('INSERT INTO order_aggregates');
  }, 300_000);

  it('deploys a processor per stage of a two-stage pipeline, the second on its repartition topic', async () => {
    const { template } = await packageFor('test/fixtures/pipelines/top-category.ts');
    const mappings = ofType(template, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    expect(mappings.map((m) => m.Topics)).toEqual([['orders'], ['top-category-dev-keyBy-2-repartition']]);
    // Another deployment stage on the same cluster shares no group, transactional id or repartition topic.
    const prod = await packageFor('test/fixtures/pipelines/top-category.ts', 'msk', {}, {}, 'prod');
    const prodMappings = ofType(prod.template, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
    expect(prodMappings.map((m) => m.Topics)).toEqual([['orders'], ['top-category-prod-keyBy-2-repartition']]);
    expect(prodMappings.map((m) => (m.AmazonManagedKafkaEventSourceConfig as { ConsumerGroupId: string }).ConsumerGroupId)).toEqual([
      'top-category-prod',
      'top-category-prod-stage-2',
    ]);
    expect(JSON.stringify(prod.template)).not.toMatch(/top-category-dev|transactional-id\/[^"]*top-category-tx-stage/);
    for (const [, fn] of ofType(prod.template, 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment).toMatchObject({ Variables: { SLUICE_DEPLOYMENT_STAGE: 'prod' } });
    }
    expect(ofType(template, 'AWS::Lambda::Function')).toHaveLength(4);
  }, 300_000);

  it('sets each trigger’s batching and pollers from the pipeline and its starting position from the source, and lets --param override the batching', async () => {
    const { template } = await packageFor('test/fixtures/pipelines/tuned-triggers.ts');
    const [mapping] = ofType(template, 'AWS::Lambda::EventSourceMapping');
    expect(mapping?.[1].Properties).toMatchObject({
      Topics: ['clicks'],
      BatchSize: 2000,
      MaximumBatchingWindowInSeconds: 5,
      StartingPosition: 'LATEST',
      ProvisionedPollerConfig: { MinimumPollers: 2, MaximumPollers: 10 },
    });
    const overridden = await packageFor('test/fixtures/pipelines/tuned-triggers.ts', 'msk', {}, { batchSize: '50', batchingWindowSeconds: '0' });
    expect(ofType(overridden.template, 'AWS::Lambda::EventSourceMapping')[0]?.[1].Properties).toMatchObject({ BatchSize: 50, MaximumBatchingWindowInSeconds: 0 });
  }, 300_000);

  it('triggers from a self-managed Kafka cluster instead, reading SCRAM credentials from Secrets Manager', async () => {
    const { template } = await packageFor('examples/order-aggregation.ts', 'self-managed', {}, { kafkaAuth: 'SCRAM' });
    const [mapping] = ofType(template, 'AWS::Lambda::EventSourceMapping');
    expect(mapping?.[1].Properties).toMatchObject({
      Topics: ['orders'],
      SelfManagedEventSource: { Endpoints: { KafkaBootstrapServers: ['b-1.sluice.example.c3.kafka.eu-west-1.amazonaws.com:9098'] } },
      SelfManagedKafkaEventSourceConfig: { ConsumerGroupId: 'order-aggregation-dev' },
    });
    expect(JSON.stringify(mapping?.[1].Properties.SourceAccessConfigurations)).toContain('SASL_SCRAM_512_AUTH');
    expect(JSON.stringify(ofType(template, 'AWS::IAM::Role'))).toContain('secretsmanager:GetSecretValue');
  }, 300_000);

  it("bundles a self-managed cluster's certificate authority into every function, and lets its triggers verify the brokers with the authority's secret", async () => {
    const authority = join(mkdtempSync(join(tmpdir(), 'sluice-ca-')), 'ca.pem');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUSluiceTestAuthority\n-----END CERTIFICATE-----\n';
    writeFileSync(authority, pem);
    const rootCa = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:kafka-root-ca-AbC123';
    const { folder, template } = await packageFor('examples/order-aggregation.ts', 'self-managed', {}, { kafkaAuth: 'SCRAM', kafkaTlsCaFile: authority, kafkaServerRootCaSecretArn: rootCa });
    for (const [, mapping] of ofType(template, 'AWS::Lambda::EventSourceMapping')) {
      expect(mapping.Properties.SourceAccessConfigurations).toContainEqual({ Type: 'SERVER_ROOT_CA_CERTIFICATE', URI: rootCa });
    }
    const functions = ofType(template, 'AWS::Lambda::Function');
    for (const [name, fn] of functions) {
      expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.KAFKA_TLS_CA_FILE, name).toBe('/var/task/certificates/kafka-ca.pem');
    }
    const python = inject('pythonTools').python;
    for (const zip of readdirSync(folder).filter((file) => file.endsWith('.zip'))) {
      const unzipped = join(folder, `${zip}-files`);
      await run(python, ['-m', 'zipfile', '-e', join(folder, zip), unzipped]);
      expect(readFileSync(join(unzipped, 'certificates', 'kafka-ca.pem'), 'utf8'), zip).toBe(pem);
    }
    const processorRoles = ofType(template, 'AWS::IAM::Role').filter(([name]) => name.startsWith('Processor'));
    expect(processorRoles.length).toBeGreaterThan(0);
    for (const [name, role] of processorRoles) {
      expect(JSON.stringify(role.Properties.Policies), name).toContain(rootCa);
    }
    await expect(packageFor('examples/order-aggregation.ts', 'msk', {}, { kafkaTlsCaFile: join(folder, 'no-such.pem') })).rejects.toThrow(/--param kafkaTlsCaFile=.*no-such\.pem cannot be read/);
    const failure = (await packageFor('examples/order-aggregation.ts', 'msk', {}, { kafkaServerRootCaSecretArn: rootCa }).catch((error: unknown) => error)) as { stdout?: string; stderr?: string };
    expect(`${failure.stdout ?? ''}${failure.stderr ?? ''}`).toContain('--param kafkaServerRootCaSecretArn is for self-managed Kafka triggers');
  }, 300_000);

  it('authenticates triggers and functions to MSK with SASL/SCRAM from the secret, and no credential in any environment', async () => {
    const secret = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AmazonMSK_orders-XyZ123';
    const { template } = await packageFor('examples/order-aggregation.ts', 'msk', {}, { kafkaAuth: 'SCRAM', kafkaScramSecretArn: secret });
    for (const [, mapping] of ofType(template, 'AWS::Lambda::EventSourceMapping')) {
      expect(mapping.Properties.SourceAccessConfigurations).toEqual([{ Type: 'SASL_SCRAM_512_AUTH', URI: secret }]);
    }
    const functions = ofType(template, 'AWS::Lambda::Function');
    for (const [name, fn] of functions) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables, name).toMatchObject({ KAFKA_AUTH: 'SCRAM', KAFKA_SASL_SECRET_ARN: secret });
      expect(Object.keys(variables).filter((key) => /PASSWORD|USERNAME|SECRET(?!_ARN)/.test(key)), name).toEqual([]);
    }
    // Each function's role reads that secret, and no other.
    const roles = ofType(template, 'AWS::IAM::Role');
    expect(roles).toHaveLength(functions.length);
    for (const [name, role] of roles) {
      const statements = (role.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
      const reads = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('secretsmanager:')));
      expect(reads, name).toEqual([{ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: [secret] }]);
    }
  }, 300_000);

  it('gives the processors the schema registries, a registry secret and a Glue registry, and only they may use them', async () => {
    const secret = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:registry-AbC123';
    const url = 'https://registry.example.com:8081';
    const { template } = await packageFor('examples/order-aggregation-avro.ts', 'msk', {}, { schemaRegistryUrl: url, schemaRegistrySecretArn: secret, glueSchemaRegistryName: 'orders-registry' });
    const functions = ofType(template, 'AWS::Lambda::Function');
    const processors = functions.filter(([name]) => /^Processor/.test(name));
    expect(processors.length).toBeGreaterThan(0);
    for (const [name, fn] of functions) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      if (processors.some(([processor]) => processor === name)) {
        expect(variables, name).toMatchObject({ SCHEMA_REGISTRY_URL: url, SCHEMA_REGISTRY_SECRET_ARN: secret, GLUE_SCHEMA_REGISTRY_NAME: 'orders-registry' });
      } else {
        expect(variables.SCHEMA_REGISTRY_SECRET_ARN, name).toBeUndefined();
        expect(variables.GLUE_SCHEMA_REGISTRY_NAME, name).toBeUndefined();
      }
    }
    for (const [name, role] of ofType(template, 'AWS::IAM::Role')) {
      const statements = (role.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
      const reads = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('secretsmanager:')));
      expect(reads, name).toEqual(/^Processor/.test(name) ? [{ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: [secret] }] : []);
      const glue = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('glue:')));
      const glueArn = (resource: string) => ({ 'Fn::Sub': `arn:\${AWS::Partition}:glue:\${AWS::Region}:\${AWS::AccountId}:${resource}` });
      expect(glue, name).toEqual(
        /^Processor/.test(name)
          ? [
              {
                Effect: 'Allow',
                Action: ['glue:GetSchemaVersion', 'glue:GetSchemaByDefinition', 'glue:RegisterSchemaVersion', 'glue:CreateSchema'],
                Resource: [glueArn('registry/orders-registry'), glueArn('schema/orders-registry/*')],
              },
            ]
          : [],
      );
    }
  }, 300_000);

  it('sluice deploy --package-only says what it found of the topics before it packages', async () => {
    const saved = process.env.KAFKA_BROKERS;
    process.env.KAFKA_BROKERS = '127.0.0.1:1';
    try {
      const packaged = await sluice('deploy', 'examples/order-aggregation.ts', '--package-only');
      expect(packaged).toMatchObject({ code: 0, stderr: '' });
      expect(packaged.stdout).toMatch(/^Topics: not checked, the brokers 127\.0\.0\.1:1 did not answer \(.*\)\.\nPackaged into \.sluice\/deploy\/order-aggregation\/\.serverless\n$/);
    } finally {
      if (saved === undefined) delete process.env.KAFKA_BROKERS;
      else process.env.KAFKA_BROKERS = saved;
    }
  }, 300_000);

  it('refuses a self-managed trigger whose functions would not use SCRAM', async () => {
    const failure = (await packageFor('examples/order-aggregation.ts', 'self-managed').catch((error: unknown) => error)) as { stdout?: string; stderr?: string };
    expect(`${failure.stdout ?? ''}${failure.stderr ?? ''}`).toContain(
      'A self-managed Kafka trigger authenticates with SASL/SCRAM: add --param kafkaAuth=SCRAM so that the functions do too',
    );
  }, 300_000);
});
