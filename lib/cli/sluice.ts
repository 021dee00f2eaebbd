import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { formatPipelineCost, pipelineCost } from '../cost/pipeline-cost.js';
import { describePlan, formatPlan } from '../plan/explain.js';
import { assertDeployable, planPipeline, PipelineValidationError } from '../plan/planner.js';
import { configWithSecrets, PipelineRuntime, type RuntimeConfig } from '../aws/runtime.js';
import { formatStatus, pipelineStatus } from '../runtime/status.js';
import { checkTopicSettings, formatTopicSettings, topicSettingsConnection } from '../runtime/topic-settings.js';
import type { KafkaConnectionOptions } from '../kafka/connection.js';
import type { Plan } from '../plan/plan.js';
import { OfflineSession } from '../offline/offline.js';
import { offlineRuntimeConfig, offlineStateDir } from '../offline/offline-state.js';
import { acquireSchemaRegistry } from '../offline/schema-registry.js';
import { savepointNameProblem } from '../snapshot/checkpoint-state.js';
import { DEPLOY_CONFIG_FILE, deployTools, runServerless, writeService } from './deploy.js';
import { initProject } from './init.js';
import { loadPipeline, loadPipelineModule } from './load-pipeline.js';
import { claimPipelineName } from './pipeline-names.js';
import { isSqlPipelineFile } from '../sql/pipeline-file.js';
import { PipelineTypeError, typeCheckPipeline } from './type-check.js';
import { symbolicate } from './symbolicate.js';

type Output = (text: string) => void;
type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };

interface Command {
  readonly summary: string;
  readonly usage: string;
  /** What the one positional argument is, when not a pipeline file. */
  readonly argument?: string;
  /** The pipeline file (or argument) when none is given; without one, it is required. */
  readonly defaultFile?: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  run(file: string, values: Parsed['values'], out: Output): Promise<void>;
}

/** What a missing table or bucket means to someone asking about a pipeline. */
function explainMissing(error: unknown, config: RuntimeConfig, offline: boolean): unknown {
  const name = (error as { name?: unknown }).name;
  const where = offline ? 'its offline state lacks it' : 'the pipeline has not been deployed to this account and region (sluice deploy)';
  if (name === 'ResourceNotFoundException') {
    return new Error(`The state table ${config.tableName} does not exist: ${where}, or SLUICE_STATE_TABLE names another table`, { cause: error });
  }
  if (name === 'NoSuchBucket') {
    return new Error(`The snapshot bucket ${config.snapshotBucket ?? ''} does not exist: ${where}, or SLUICE_SNAPSHOT_BUCKET names another bucket`, { cause: error });
  }
  return error;
}

/**
 * The pipeline's runtime: a deployed one from the environment variables its functions read, or
 * with --offline the one `sluice offline` keeps in its state folder (running or not).
 */
async function withRuntime<T>(
  command: string,
  file: string,
  values: Parsed['values'],
  use: (runtime: PipelineRuntime) => Promise<T>,
  { needsStopped = false } = {},
): Promise<T> {
  const pipeline = await loadPipeline(file);
  const stateDir = values['state-dir'];
  const offline =
    values.offline === true
      ? await offlineRuntimeConfig(pipeline.name, offlineStateDir(pipeline.name, typeof stateDir === 'string' ? stateDir : undefined), `sluice ${command}`, () => undefined)
      : undefined;
  try {
    if (offline?.running && needsStopped) {
      throw new Error(`sluice offline runs on this state now: stop it first (Ctrl-C), then restore, then start it again`);
    }
    const config = offline?.config ?? (await configWithSecrets());
    const runtime = new PipelineRuntime(pipeline, config);
    try {
      return await use(runtime);
    } catch (error) {
      throw explainMissing(error, config, offline !== undefined);
    } finally {
      await runtime.close();
    }
  } finally {
    await offline?.close();
  }
}

const TYPE_CHECK_OPTION = { 'no-type-check': { type: 'boolean' } } as const;

const TYPE_CHECK_HELP = `  --no-type-check   run the pipeline file without type-checking it first (with the project's
                    TypeScript and tsconfig.json)`;

/**
 * Type-checks the pipeline file unless --no-type-check, so that a type error stops the command
 * before it runs anything. A SQL file is checked as it is planned, which every command does first.
 */
function typeCheckUnlessSkipped(file: string, values: Parsed['values']): void {
  if (values['no-type-check'] !== true && !isSqlPipelineFile(file)) typeCheckPipeline(file, process.cwd());
}

const OFFLINE_OPTIONS = { offline: { type: 'boolean' }, 'state-dir': { type: 'string' } } as const;

const OFFLINE_HELP = `  --offline     the pipeline as sluice offline runs it: its state folder, and the
                running instance's emulators if one runs
  --state-dir   with --offline: the state folder (default .sluice/offline/<pipeline>)`;

const ENVIRONMENT_HELP = `Environment (as the pipeline's functions read it):
  SLUICE_STATE_TABLE        the pipeline's DynamoDB table
  SLUICE_SNAPSHOT_BUCKET    the pipeline's S3 snapshot bucket
  SLUICE_DEPLOYMENT_STAGE   the deployment stage (sluice deploy --stage; dev by default), part of its
                            consumer groups, transactional ids and repartition topics
  KAFKA_BROKERS             bootstrap brokers, host:port,host:port
  SLUICE_DYNAMODB_ENDPOINT, SLUICE_S3_ENDPOINT   emulator endpoints (offline mode)
`;

function stringOption(values: Parsed['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function positiveNumber(values: Parsed['values'], name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  const number = Number(value);
  if (typeof value !== 'string' || !Number.isFinite(number) || number <= 0) throw new UsageError(`--${name} must be a positive number, not ${String(value)}`);
  return number;
}

/** Resolves on Ctrl-C, SIGTERM or after `seconds`. */
function untilStopped(seconds: number | undefined): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      clearTimeout(timer);
      resolve(why);
    };
    const onSignal = (signal: NodeJS.Signals) => done(signal);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const timer = seconds === undefined ? undefined : setTimeout(() => done(`${seconds} s passed`), seconds * 1_000);
  });
}

/** The status line: rewritten in place on a terminal, a line every ten seconds otherwise. */
function statusWriter(): (line: string) => void {
  if (process.stderr.isTTY) return (line) => process.stderr.write(`\r\x1b[2K${line.slice(0, process.stderr.columns - 1)}`);
  let count = 0;
  return (line) => {
    if (count++ % 10 === 0) process.stderr.write(`${line}\n`);
  };
}

const COMMANDS: Record<string, Command> = {
  init: {
    summary: 'start a new project: a pipeline, its test, and what they need',
    argument: 'folder',
    defaultFile: '.',
    usage: `Usage: sluice init [folder]

Writes a new project into the folder (the current one by default), which must be empty: a
package.json that depends on sluice, a tsconfig, .gitignore, pipelines/orders.ts (5-minute
order totals per category, exactly once), test/orders.test.ts (the pipeline in the test
harness, with vitest) and a README. Then: cd into it, npm install, npm test.

Options:
  --help   show this help
`,
    options: {},
    run(folder, _values, out) {
      initProject(folder);
      const into = folder === '.' ? '' : `cd ${folder} && `;
      out(
        `Created a Sluice project in ${resolve(folder)}.\n\n` +
          `  ${into}npm install\n  npm test                                   # the pipeline in the harness: no broker, no AWS\n` +
          '  npx sluice offline pipelines/orders.ts     # the pipeline on this machine, with a local Kafka broker\n',
      );
      return Promise.resolve();
    },
  },
  offline: {
    summary: 'run a pipeline on this machine: local Kafka, DynamoDB and S3 emulators, the Lambda handlers',
    usage: `Usage: sluice offline <pipeline-file> [options]

Runs the pipeline's processor, coordinator and commit handlers on this machine, as AWS would:
the local Kafka broker (started or reused; KAFKA_BROKERS for another), DynamoDB (dynalite) and
S3 (s3rver) embedded, their data kept in .sluice/offline/<pipeline> so that a restart — even
after a kill — carries on exactly once; MSK's event source mapping emulated (one poller per
partition, batch size and window, the whole batch retried on error, group offsets committed
after success); the coordinator on a timer. Stop it with Ctrl-C.

Options:
  --generate <rate>             write <rate> input records a second with the file's generateInput
                                export (default 1000 when it has one)
  --no-generate                 only process what the input topics hold and receive
  --print-output                print what the sinks write, read back with read_committed
  --schema-registry             start the local schema registry (Apicurio, built from Maven Central on first
                                use; SCHEMA_REGISTRY_URL for another) and set SCHEMA_REGISTRY_URL for the
                                pipeline file, before loading it
  --checkpoint-interval <ms>    replace the pipeline's checkpoint interval (output appears at checkpoints)
  --batch-size <n>              records per event, at most (default: the pipeline's, else 100, as Lambda)
  --batch-window <ms>           batching window (default: the pipeline's, else 500, as Lambda)
  --partitions <n>              partitions of the topics it creates (default 4)
  --state-dir <dir>             where the emulators keep their data
  --for <seconds>               stop by itself after this long
${TYPE_CHECK_HELP}
  --help                        show this help

Environment: KAFKA_BROKERS, SCHEMA_REGISTRY_URL, SLUICE_DYNAMODB_ENDPOINT, SLUICE_S3_ENDPOINT to use
running services.
`,
    options: {
      generate: { type: 'string' },
      'no-generate': { type: 'boolean' },
      'print-output': { type: 'boolean' },
      'schema-registry': { type: 'boolean' },
      'checkpoint-interval': { type: 'string' },
      'batch-size': { type: 'string' },
      'batch-window': { type: 'string' },
      partitions: { type: 'string' },
      'state-dir': { type: 'string' },
      for: { type: 'string' },
      ...TYPE_CHECK_OPTION,
    },
    async run(file, values, out) {
      if (values.generate !== undefined && values['no-generate']) throw new UsageError('give --generate or --no-generate, not both');
      typeCheckUnlessSkipped(file, values);
      // The pipeline file reads SCHEMA_REGISTRY_URL when it builds its formats, so the registry comes first.
      const registry = values['schema-registry'] ? await acquireSchemaRegistry({ log: (line) => out(`[schema registry] ${line}\n`) }) : undefined;
      if (registry) process.env.SCHEMA_REGISTRY_URL = registry.url;
      try {
        const { pipeline, generateInput } = await loadPipelineModule(file);
        claimPipelineName(process.cwd(), pipeline.name, file);
        const rate = values['no-generate'] ? 0 : (positiveNumber(values, 'generate') ?? (generateInput ? 1_000 : 0));
        if (rate > 0 && !generateInput) {
          throw new Error(`${file} exports no generateInput(index) => { topic, key, value }: --generate needs one (or use --no-generate)`);
        }
        const checkpointIntervalMs = positiveNumber(values, 'checkpoint-interval');
        const batchSize = positiveNumber(values, 'batch-size');
        const batchWindowMs = positiveNumber(values, 'batch-window');
        const partitions = positiveNumber(values, 'partitions');
        const stateDir = values['state-dir'];
        const session = await OfflineSession.start({
          pipeline,
          out: (line) => out(`${line}\n`),
          status: statusWriter(),
          generateRate: rate,
          ...(generateInput ? { generateInput } : {}),
          printOutput: values['print-output'] === true,
          ...(checkpointIntervalMs === undefined ? {} : { checkpointIntervalMs }),
          ...(batchSize === undefined ? {} : { batchSize }),
          ...(batchWindowMs === undefined ? {} : { batchWindowMs }),
          ...(partitions === undefined ? {} : { partitions }),
          ...(typeof stateDir === 'string' ? { stateDir } : {}),
        });
        out(`Running${rate > 0 ? `, generating ${rate} records/s` : ''}; Ctrl-C stops.\n`);
        const why = await untilStopped(positiveNumber(values, 'for'));
        out(`\nStopping (${why})...\n`);
        await session.stop();
      } finally {
        await registry?.release();
      }
      out('Stopped.\n');
    },
  },
  explain: {
    summary: 'print the stages, operators, topics and state of a pipeline',
    usage: `Usage: sluice explain <pipeline-file> [--json]

Compiles the pipeline (the file's default export) into stages and prints them:
each stage's input, its operators with their state, and what it writes. Where the brokers
answer (KAFKA_BROKERS and KAFKA_AUTH, else the sources' bootstrap servers), it also reads
each topic's partitions and settings, and warns of what will bite: a missing topic, a sink
whose retention would delete output stamped with old event times, a repartition topic with
other partitions than the pipeline's parallelism.

Options:
  --json         print the plan as JSON
  --stage        the names a deployment stage gives it (sluice deploy --stage): consumer groups,
                 transactional ids and repartition topics; without it, offline mode's names
  --no-brokers   do not contact the brokers
${TYPE_CHECK_HELP}
  --help         show this help
`,
    options: { json: { type: 'boolean' }, stage: { type: 'string' }, 'no-brokers': { type: 'boolean' }, ...TYPE_CHECK_OPTION },
    async run(file, values, out) {
      typeCheckUnlessSkipped(file, values);
      const plan = planPipeline(await loadPipeline(file), { deploymentStage: stringOption(values, 'stage') });
      const topics = values['no-brokers'] ? undefined : await topicSettingsOf(plan);
      if (values.json) {
        out(`${JSON.stringify({ ...describePlan(plan), ...(topics ? { topics: topics.result } : {}) }, null, 2)}\n`);
        return;
      }
      out(formatPlan(plan) + (topics ? `\n${formatTopicSettings(topics.brokers, topics.result)}` : ''));
    },
  },
  cost: {
    summary: 'model what a pipeline costs on AWS at a rate, beside Managed Service for Apache Flink',
    usage: `Usage: sluice cost <pipeline-file> --rate <records/s> [--record-bytes <n>] [--partitions <n>]

Models the dollars per million records and a month of the pipeline deployed by sluice deploy:
its processors on Lambda (INIT included), DynamoDB and S3, the coordinator and the checkpoints,
beside Managed Service for Apache Flink at the same rate, with the Kafka cluster apart (either
needs it). Batches are what the pipeline's triggers take at that rate (its setEventSourceMapping,
else the template's 10,000 records in a 1 s window). The per-batch costs are the benchmark's
of the seed pipeline (lib/cost/pipeline-cost.ts), so a pipeline that does more per record costs
more than this says; the prices are us-east-1's and say their date.

Options:
  --rate <records/s>      records a second into the sources (required)
  --record-bytes <n>      a record's size (default 256)
  --partitions <n>        the source topics' partitions (default 4)
${TYPE_CHECK_HELP}
  --help                  show this help
`,
    options: { rate: { type: 'string' }, 'record-bytes': { type: 'string' }, partitions: { type: 'string' }, ...TYPE_CHECK_OPTION },
    async run(file, values, out) {
      const rate = positiveNumber(values, 'rate');
      if (rate === undefined) throw new UsageError('give the rate: --rate <records/s>');
      const recordBytes = positiveNumber(values, 'record-bytes');
      const shards = positiveNumber(values, 'partitions');
      if (shards !== undefined && !Number.isInteger(shards)) throw new UsageError(`--partitions must be a whole number, not ${shards}`);
      typeCheckUnlessSkipped(file, values);
      const plan = planPipeline(await loadPipeline(file));
      out(formatPipelineCost(plan, pipelineCost(plan, { rate, ...(recordBytes === undefined ? {} : { recordBytes }), ...(shards === undefined ? {} : { shards }) })));
    },
  },
  deploy: {
    summary: 'deploy a pipeline to AWS with the serverless CLI (or only package it)',
    usage: `Usage: sluice deploy <pipeline-file> [--stage <stage>] [--region <region>] [--param <name=value> ...] [--package-only [--package <dir>]]

Deploys the pipeline with the serverless CLI (osls, with esbuild): a processor function per
stage on its MSK trigger, the coordinator on a schedule, the commit function, the state table,
the snapshot bucket, a least-privilege role per function, the alarms and a dashboard. The
service is written to .sluice/deploy/<pipeline>/ (no serverless.yml of your own); each
function's bundle holds the pipeline file, what it imports and Sluice's runtime.

Parameters: mskClusterArn, mskClusterName, mskClusterUuid, kafkaBootstrapServers, subnetIdA,
subnetIdB and securityGroupId (each deployment needs them); kafkaAuth (IAM, SCRAM or TLS;
default IAM), with SCRAM kafkaScramSecretArn and kafkaScramKmsKeyArn; kafkaTlsCaFile (a PEM
file of the cluster's certificate authority, bundled into every function) and, for
self-managed triggers, kafkaServerRootCaSecretArn (the same authority in Secrets Manager); schemaRegistryUrl and
schemaRegistrySecretArn; glueSchemaRegistryName (an AWS Glue registry); batchSize and batchingWindowSeconds (where the pipeline's
env.setEventSourceMapping does not set them; given here, they win over it);
snapshotRetentionDays (7); alarmOffsetLag (100000). SLUICE_KAFKA_TRIGGER=self-managed makes
the triggers self-managed Kafka event sources (with kafkaAuth=SCRAM).

${DEPLOY_CONFIG_FILE}, if the project has one, is merged over the generated serverless.yml:
per-stage parameters (params.<stage>), provider settings (tags, stackTags, region, ...),
extra resources (resources) and plugins. AWS credentials come from the usual places.

The first deploy on a machine installs osls, serverless-esbuild and esbuild into Sluice's
cache, unless the project has them.

Options:
  --stage          the deployment stage (default dev)
  --region         the AWS region (default eu-west-1)
  --param          a parameter, name=value; repeat it
  --package-only   build the bundles and the CloudFormation template, deploy nothing
  --package        with --package-only: the folder to write them to (default
                   .sluice/deploy/<pipeline>/.serverless)
${TYPE_CHECK_HELP}
  --help           show this help
`,
    options: {
      stage: { type: 'string' },
      region: { type: 'string' },
      param: { type: 'string', multiple: true },
      'package-only': { type: 'boolean' },
      package: { type: 'string' },
      ...TYPE_CHECK_OPTION,
    },
    async run(file, values, out) {
      const packageOnly = values['package-only'] === true;
      const packageDir = stringOption(values, 'package');
      if (packageDir !== undefined && !packageOnly) throw new UsageError('--package goes with --package-only');
      const stage = stringOption(values, 'stage') ?? 'dev';
      const args = [packageOnly ? 'package' : 'deploy', '--stage', stage];
      const region = stringOption(values, 'region');
      if (region !== undefined) args.push('--region', region);
      const params: Record<string, string> = {};
      for (const param of [values.param ?? []].flat()) {
        if (typeof param !== 'string') continue;
        const match = /^([A-Za-z0-9]+)=(.*)$/.exec(param);
        if (!match?.[1]) throw new UsageError(`--param takes name=value, not ${param}`);
        params[match[1]] = match[2] ?? '';
        args.push('--param', param);
      }
      if (packageDir !== undefined) args.push('--package', resolve(packageDir));
      // A pipeline that does not type-check or plan fails here, with its own message, before anything is built.
      typeCheckUnlessSkipped(file, values);
      const pipeline = await loadPipeline(file);
      const plan = assertDeployable(planPipeline(pipeline, { deploymentStage: stage }));
      claimPipelineName(process.cwd(), pipeline.name, file);
      const topics = await topicSettingsOf(plan);
      out(formatTopicSettings(topics.brokers, topics.result));
      const tools = deployTools(process.cwd(), (line) => out(`${line}\n`));
      const serviceDir = writeService(
        { pipelineFile: file, pipeline: pipeline.name, projectDir: process.cwd(), stage, params, packageOnly, selfManaged: process.env.SLUICE_KAFKA_TRIGGER === 'self-managed' },
        tools.esbuildPlugin,
      );
      const code = await runServerless(tools, serviceDir, args, { ...process.env, SLUICE_PIPELINE_FILE: resolve(file) });
      if (code !== 0) throw new Error(`serverless ${args[0] ?? ''} exited with code ${code}`);
      out(packageOnly ? `Packaged into ${packageDir ?? relative(process.cwd(), join(serviceDir, '.serverless'))}\n` : 'Deployed.\n');
    },
  },
  status: {
    summary: 'show checkpoints, and per shard offsets, lag and pending or lost transactions',
    usage: `Usage: sluice status <pipeline-file> [--json]

Reads the pipeline's state table and brokers: the latest triggered, completed and
committed checkpoints, and for every shard its offset, its lag behind the log, the
checkpoint it acknowledged, and its pending transactions with their state at the broker.

Options:
  --json        print the status as JSON
${OFFLINE_HELP}
  --help        show this help

${ENVIRONMENT_HELP}`,
    options: { json: { type: 'boolean' }, ...OFFLINE_OPTIONS },
    async run(file, values, out) {
      const status = await withRuntime('status', file, values, (runtime) => pipelineStatus(runtime));
      out(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    },
  },
  savepoint: {
    summary: 'write a named savepoint of the latest committed checkpoint',
    usage: `Usage: sluice savepoint <pipeline-file> --name <name>

Writes savepoints/<name>/manifest.json in the snapshot bucket: the latest committed
checkpoint with each shard's state merged into one object. A completed checkpoint is
committed first, as the commit function would. Refuses while a lost transaction's rollback
is pending: let the pipeline run on. Names are never reused.

Options:
  --name        the savepoint's name: letters, digits, '.', '_' and '-'
${OFFLINE_HELP}
  --help        show this help

${ENVIRONMENT_HELP}`,
    options: { name: { type: 'string' }, ...OFFLINE_OPTIONS },
    async run(file, values, out) {
      const name = values.name;
      if (typeof name !== 'string') throw new UsageError('give the savepoint a --name');
      const problem = savepointNameProblem(name);
      if (problem) throw new UsageError(problem);
      const { checkpoint, key } = await withRuntime('savepoint', file, values, (runtime) => runtime.savepoint(name));
      out(`Savepoint ${name} written from checkpoint ${checkpoint} (${key})\n`);
    },
  },
  restore: {
    summary: 'restore a checkpoint or savepoint into a stopped pipeline, rescaling if needed',
    usage: `Usage: sluice restore <pipeline-file> (--checkpoint <N> | --savepoint <name>)

Stop the pipeline's triggers first. Replaces the pipeline's keyed state with the
snapshot's, moving keys to the shards their records now reach (the source may have more or
fewer partitions, or be another topic), resets offsets and aborts transactions written after
the snapshot. Start the triggers again afterwards.

Options:
  --checkpoint  a checkpoint number (sluice status shows the latest committed)
  --savepoint   a savepoint name
${OFFLINE_HELP}
  --help        show this help

${ENVIRONMENT_HELP}`,
    options: { checkpoint: { type: 'string' }, savepoint: { type: 'string' }, ...OFFLINE_OPTIONS },
    async run(file, values, out) {
      const { checkpoint, savepoint } = values;
      if ((checkpoint === undefined) === (savepoint === undefined)) throw new UsageError('give either --checkpoint or --savepoint');
      if (typeof checkpoint === 'string' && !/^\d+$/.test(checkpoint)) throw new UsageError(`--checkpoint must be a number, not ${checkpoint}`);
      const source = typeof savepoint === 'string' ? { savepoint } : { checkpoint: Number(checkpoint) };
      const report = await withRuntime('restore', file, values, (runtime) => runtime.restore(source), { needsStopped: true });
      out(
        `Restored ${typeof savepoint === 'string' ? `savepoint ${savepoint}` : `checkpoint ${String(checkpoint)}`} into ` +
          `${report.shards} shards: ${report.keys} keys (${report.itemsDeleted} state items deleted first), ${report.transactionsCommitted} ` +
          `transactions committed, ${report.transactionsAborted} aborted. It is checkpoint ${report.checkpoint} now.\n`,
      );
    },
  },
  resume: {
    summary: 'let shards stopped at a failing record try it again',
    usage: `Usage: sluice resume <pipeline-file>

Under BadRecordPolicy.fail, a shard that fails at a record as often as its maxAttempts
allows stops there: it acknowledges checkpoints and processes nothing more (sluice status
shows it STOPPED). Fix the record or the function and deploy it first; then this gives every
failing shard its attempts again, and each reads on from the record it stopped at.

Options:
${OFFLINE_HELP}
  --help        show this help

${ENVIRONMENT_HELP}`,
    options: { ...OFFLINE_OPTIONS },
    async run(file, values, out) {
      const resumed = await withRuntime('resume', file, values, (runtime) => runtime.resume());
      if (resumed.length === 0) {
        out('No shard is failing at a record: nothing to resume.\n');
        return;
      }
      for (const { stageId, topic, partition, failure } of resumed) {
        out(`Resumed ${stageId} ${topic}/${partition}: it tries offset ${failure.offset} again (it had failed ${failure.attempts} times).\n`);
      }
    },
  },
  symbolicate: {
    summary: 'map a deployed function’s stack trace back to the sources, with its source maps',
    argument: 'source-map folder',
    defaultFile: join('.sluice', 'deploy'),
    usage: `Usage: sluice symbolicate [source-map-folder] < trace.txt

Reads a stack trace of a deployed function (from its CloudWatch logs) on standard input and
prints it with each position in a bundle (functions/processor.mjs:76:33931) replaced by its
position in the sources (lib/runtime/processor.ts:412:11). The maps are those that
\`sluice deploy\` and \`sluice deploy --package-only\` leave beside the zips, in
.sluice/deploy/<pipeline>/.serverless/sourcemaps (or the --package folder's sourcemaps); keep
them with the deployment they came from. The folder may be any that holds one set of them:
by default .sluice/deploy, when one pipeline has been packaged.

Options:
  --help   show this help
`,
    options: {},
    async run(folder, _values, out) {
      const functions = sourceMapsIn(folder);
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      out(symbolicate(Buffer.concat(chunks).toString('utf8'), functions));
    },
  },
};

/** The one folder of functions' source maps at or under `folder` (a package folder, a service folder, .sluice/deploy). */
function sourceMapsIn(folder: string): string {
  const services = existsSync(folder) ? readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(folder, entry.name)) : [];
  const candidates = [folder, join(folder, 'sourcemaps'), join(folder, '.serverless', 'sourcemaps'), ...services.map((service) => join(service, '.serverless', 'sourcemaps'))]
    .map((candidate) => join(candidate, 'functions'))
    .filter((candidate) => existsSync(candidate));
  if (candidates.length === 1 && candidates[0]) return candidates[0];
  if (candidates.length === 0) {
    throw new Error(`${folder} holds no functions/*.mjs.map: package the pipeline first (sluice deploy --package-only), or name the folder that holds them`);
  }
  throw new Error(`${folder} holds the source maps of several packages (${candidates.join(', ')}): name the one the trace came from`);
}

class UsageError extends Error {}

/** The pipeline's topics as the brokers have them, where they answer. */
async function topicSettingsOf(plan: Plan) {
  let connection: KafkaConnectionOptions;
  try {
    connection = topicSettingsConnection(plan);
  } catch (error) {
    return { brokers: [] as string[], result: { unreachable: error instanceof Error ? error.message : String(error) } };
  }
  return { brokers: connection.brokers, result: await checkTopicSettings(plan, connection) };
}

const USAGE = `Usage: sluice <command> <pipeline-file> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join('\n')}

A pipeline file is a TypeScript module whose default export is its environment, or a Flink SQL
script (.sql; docs/sql.md). Run a command with --help for its options.
`;

/** Exit codes: 0 done, 1 the command failed (invalid pipeline, unreachable service, ...), 2 the command line is wrong. */
export async function main(argv: readonly string[], out: Output, err: Output): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? err : out)(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    err(`sluice: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: [...rest], allowPositionals: true, options: { ...command.options, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    err(`sluice ${name}: ${error instanceof Error ? error.message : String(error)}\n\n${command.usage}`);
    return 2;
  }
  if (parsed.values.help) {
    out(command.usage);
    return 0;
  }
  const [file = command.defaultFile, extra] = parsed.positionals;
  if (file === undefined || extra !== undefined) {
    err(`sluice ${name}: give exactly one ${command.argument ?? 'pipeline file'}\n\n${command.usage}`);
    return 2;
  }
  try {
    await command.run(file, parsed.values, out);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err(`sluice ${name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    const kind = error instanceof PipelineValidationError || error instanceof PipelineTypeError ? 'invalid pipeline' : 'error';
    err(`sluice ${name}: ${kind}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
