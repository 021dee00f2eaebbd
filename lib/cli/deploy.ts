// `sluice deploy` from the user's project: a serverless service of the CLI's making in
// .sluice/deploy/<pipeline>/ (its serverless.yml, and the three functions' entry files, which
// import the user's pipeline file and `sluice/lambda`), packaged and deployed by osls with the
// esbuild plugin. The user writes no serverless.yml; what a team needs beyond Sluice's
// (tags, resources, per-stage parameters) goes in an optional sluice.deploy.yml, merged over it.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { buildOnce, sluiceCacheDir } from '../offline/cache-folder.js';
import { isSqlPipelineFile, sqlPipelineName } from '../sql/pipeline-file.js';

/** Sluice's own folder: the package root, in a checkout as when installed. */
const SLUICE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where a SQL pipeline's module is written among the functions' entry files. */
const SQL_PIPELINE_MODULE = 'pipeline.ts';

/** Where a deployment's certificate authority (`--param kafkaTlsCaFile`) goes in the service and in each function's zip. */
const BUNDLED_CA_FILE = 'certificates/kafka-ca.pem';
/** Lambda unpacks a function's zip here, its working folder. */
const LAMBDA_TASK_ROOT = '/var/task';

/** The tools `sluice deploy` runs, in the versions this Sluice was tested with (its devDependencies). */
const DEPLOY_TOOLS = ['osls', 'serverless-esbuild', 'esbuild'] as const;

/** The optional file of the user's additions to the generated service, in the project's folder. */
export const DEPLOY_CONFIG_FILE = 'sluice.deploy.yml';

/** What each deployment needs and has no usable default for; the placeholders only let `--package-only` run. */
const PLACEHOLDER_PARAMS: Record<string, string> = {
  mskClusterArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/sluice/11111111-2222-3333-4444-555555555555-1',
  mskClusterName: 'sluice',
  mskClusterUuid: '11111111-2222-3333-4444-555555555555-1',
  kafkaBootstrapServers: 'b-1.sluice.example.c3.kafka.eu-west-1.amazonaws.com:9098',
  kafkaScramSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AmazonMSK_sluice-AbCdEf',
  kafkaScramKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555',
  subnetIdA: 'subnet-00000000000000001',
  subnetIdB: 'subnet-00000000000000002',
  securityGroupId: 'sg-00000000000000001',
};

/** Parameters with a default that suits most deployments. */
const DEFAULT_PARAMS: Record<string, string | number> = {
  // IAM (MSK IAM auth), SCRAM (SASL/SCRAM-SHA-512, credentials in Secrets Manager) or TLS.
  kafkaAuth: 'IAM',
  // The triggers' batching, where the pipeline does not set it (env.setEventSourceMapping): a
  // batch waits at most the window, and grows with the rate up to Lambda's 10,000 records (and
  // 6 MB), so that a batch's fixed requests are spread over more records as the rate rises.
  batchSize: 10_000,
  batchingWindowSeconds: 1,
  snapshotRetentionDays: 7,
  // OffsetLagAlarm of each processor: the most records its input may fall behind for 15 minutes.
  alarmOffsetLag: 100_000,
};

export interface DeploymentOptions {
  /** The pipeline file, and the name its environment gives the pipeline. */
  readonly pipelineFile: string;
  readonly pipeline: string;
  /** The user's project: where .sluice/ and sluice.deploy.yml are. */
  readonly projectDir: string;
  readonly stage: string;
  /** `--param name=value`, as given. */
  readonly params: Readonly<Record<string, string>>;
  /** Package only: the placeholders stand in for the cluster's and network's parameters. */
  readonly packageOnly: boolean;
  /** Whether the triggers are self-managed Kafka event sources (SLUICE_KAFKA_TRIGGER=self-managed). */
  readonly selfManaged: boolean;
}

type Config = Record<string, unknown>;

function isObject(value: unknown): value is Config {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `over` merged into `base`: objects key by key, anything else replaced. */
function merged(base: Config, over: Config): Config {
  const result: Config = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = result[key];
    result[key] = isObject(current) && isObject(value) ? merged(current, value) : value;
  }
  return result;
}

/** The user's sluice.deploy.yml, if the project has one. */
function userConfig(projectDir: string): Config {
  const file = join(projectDir, DEPLOY_CONFIG_FILE);
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${DEPLOY_CONFIG_FILE} is not valid YAML: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isObject(parsed)) throw new Error(`${DEPLOY_CONFIG_FILE} must be a mapping of serverless.yml's keys (provider, params, resources, ...)`);
  for (const key of ['service', 'functions']) {
    if (key in parsed) throw new Error(`${DEPLOY_CONFIG_FILE} sets ${key}, which Sluice derives from the pipeline: remove it (tune a function under provider, or in the pipeline)`);
  }
  return parsed;
}

/** The parameters a deployment must be given, by how its triggers and functions reach the cluster. */
export function requiredParams(kafkaAuth: string, selfManaged: boolean): string[] {
  const network = ['kafkaBootstrapServers', 'subnetIdA', 'subnetIdB', 'securityGroupId'];
  const cluster = selfManaged ? [] : ['mskClusterArn', 'mskClusterName', 'mskClusterUuid'];
  const scram = kafkaAuth.toUpperCase() === 'SCRAM' ? ['kafkaScramSecretArn', ...(selfManaged ? [] : ['kafkaScramKmsKeyArn'])] : [];
  return [...cluster, ...network, ...scram];
}

/** A path for serverless.yml, relative to the service's folder, with forward slashes. */
function fromService(serviceDir: string, path: string): string {
  const relativePath = relative(serviceDir, path).split(sep).join('/');
  return relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
}

/**
 * A SQL pipeline's module: the script as it is now, planned when a function starts (the
 * parser is small enough to ship; docs/sql.md gives its share of the bundle and cold start).
 */
function sqlPipelineModule(pipelineFile: string): string {
  return (
    `// Written by sluice deploy: the SQL pipeline ${basename(pipelineFile)}, planned when a function starts.\n` +
    "import { sqlPipeline } from 'sluice';\n\n" +
    `export default sqlPipeline(${JSON.stringify(readFileSync(pipelineFile, 'utf8'))}, { name: ${JSON.stringify(sqlPipelineName(pipelineFile))} });\n`
  );
}

/** The three functions' entry files: the user's pipeline and Sluice's function factories, nothing else; and a SQL pipeline's module. */
function entryFiles(serviceDir: string, pipelineFile: string): Record<string, string> {
  const sql = isSqlPipelineFile(pipelineFile);
  const pipeline = JSON.stringify(sql ? `./${SQL_PIPELINE_MODULE.replace(/\.ts$/, '.js')}` : fromService(join(serviceDir, 'functions'), pipelineFile));
  const header = (what: string) => `// Written by sluice deploy: ${what}\nimport pipeline from ${pipeline};\n`;
  return {
    ...(sql ? { [SQL_PIPELINE_MODULE]: sqlPipelineModule(pipelineFile) } : {}),
    'processor.ts':
      header('the processor function of one stage (SLUICE_STAGE).') +
      "import { processorFunction, requiredEnvironment } from 'sluice/lambda';\n\n" +
      "export const handler = processorFunction(pipeline, requiredEnvironment('SLUICE_STAGE', 'the stage this function processes, e.g. stage-1'));\n",
    'coordinator.ts':
      header('the coordinator function, on a schedule.') +
      "import { coordinatorFunction } from 'sluice/lambda';\n\nexport const handler = coordinatorFunction(pipeline);\n",
    'commit.ts': header('the commit function.') + "import { commitFunction } from 'sluice/lambda';\n\nexport const handler = commitFunction(pipeline);\n",
  };
}

/**
 * The service's plugins, each a file in its plugins/ folder that loads the plugin from where it
 * is installed (the framework takes only package names and paths under the service's folder).
 * serverless-esbuild comes last: its after-hook removes the build folder the others read.
 */
function pluginShims(esbuildPlugin: string): Record<string, string> {
  const shim = (path: string) => `module.exports = require(${JSON.stringify(path)});\n`;
  return {
    'source-maps.cjs': shim(join(SLUICE_ROOT, 'infra', 'source-maps.cjs')),
    'batching-window.cjs': shim(join(SLUICE_ROOT, 'infra', 'batching-window.cjs')),
    'serverless-esbuild.cjs': shim(esbuildPlugin),
  };
}

/** The service's serverless.yml, as an object (JSON is YAML): Sluice's template, with the user's additions merged over it. */
function serviceConfig(options: DeploymentOptions, serviceDir: string, esbuildPlugin: string, bundledCa: boolean): Config {
  const infra = (file: string) => fromService(serviceDir, join(SLUICE_ROOT, 'infra', file));
  const params = { ...DEFAULT_PARAMS, ...(options.packageOnly ? PLACEHOLDER_PARAMS : {}) };
  const template: Config = {
    service: `sluice-${options.pipeline}`,
    frameworkVersion: '4',
    params: { default: params },
    custom: {
      sluice: `\${file(${infra('serverless.cjs')})}`,
      esbuild: {
        bundle: true,
        minify: true,
        // Class and function names survive minification, so a stack trace reads without a map.
        keepNames: true,
        // Maps outside the zips (infra/source-maps.cjs): the code loads without them.
        sourcemap: 'external',
        treeShaking: true,
        format: 'esm',
        platform: 'node',
        target: 'node22',
        outExtension: { '.js': '.mjs' },
        // ESM bundles of CommonJS dependencies (kafkajs) need require().
        banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
        exclude: [],
        packager: 'npm',
      },
    },
    plugins: Object.keys(pluginShims(esbuildPlugin)).map((file) => `./plugins/${file}`),
    package: { individually: true, ...(bundledCa ? { patterns: [BUNDLED_CA_FILE] } : {}) },
    provider: {
      name: 'aws',
      runtime: 'nodejs22.x',
      architecture: 'arm64',
      stage: "${opt:stage, 'dev'}",
      region: "${opt:region, 'eu-west-1'}",
      memorySize: 1024,
      timeout: 120,
      logRetentionInDays: 30,
      // The framework's own bucket (the packaged code and templates) refuses public access too.
      deploymentBucket: { blockPublicAccess: true },
      vpc: { subnetIds: ['${param:subnetIdA}', '${param:subnetIdB}'], securityGroupIds: ['${param:securityGroupId}'] },
      environment: {
        SLUICE_STATE_TABLE: { Ref: 'StateTable' },
        SLUICE_SNAPSHOT_BUCKET: { Ref: 'SnapshotBucket' },
        KAFKA_BROKERS: '${param:kafkaBootstrapServers}',
        KAFKA_AUTH: '${param:kafkaAuth}',
        // Part of the pipeline's consumer groups, transactional ids and repartition topics (lib/plan/names.ts).
        SLUICE_DEPLOYMENT_STAGE: '${sls:stage}',
        // The `service` dimension of the Sluice metrics, which the alarms watch: one per deployment stage.
        POWERTOOLS_SERVICE_NAME: '${self:service}-${sls:stage}',
        POWERTOOLS_METRICS_NAMESPACE: 'Sluice',
        ...(bundledCa ? { KAFKA_TLS_CA_FILE: `${LAMBDA_TASK_ROOT}/${BUNDLED_CA_FILE}` } : {}),
      },
    },
    functions: '${self:custom.sluice.functions}',
    // The table and bucket; a role per function, the alarms with their SNS topic, the dashboard.
    resources: [`\${file(${infra('resources.yml')})}`, { Resources: '${self:custom.sluice.resources}' }],
  };
  const user = userConfig(options.projectDir);
  const { resources: userResources, ...rest } = user;
  const config = merged(template, rest);
  if (userResources !== undefined) config.resources = [...(template.resources as unknown[]), userResources];
  return config;
}

/** Where the service of a pipeline is written. */
export function serviceDirOf(projectDir: string, pipeline: string): string {
  return join(projectDir, '.sluice', 'deploy', pipeline);
}

/** The parameters a deployment has, from the command line and sluice.deploy.yml, for the check before it runs. */
function givenParams(options: DeploymentOptions): Record<string, unknown> {
  const { params } = userConfig(options.projectDir);
  const byStage = isObject(params) ? params : {};
  const ofStage = (stage: string) => {
    const values = byStage[stage];
    return isObject(values) ? values : {};
  };
  return { ...DEFAULT_PARAMS, ...ofStage('default'), ...ofStage(options.stage), ...options.params };
}

/**
 * Writes the service of a pipeline into .sluice/deploy/<pipeline>/ and returns its folder.
 * A deployment (not a package) must be given every parameter it needs; the message names each
 * one missing and where to give it.
 */
export function writeService(options: DeploymentOptions, esbuildPlugin: string): string {
  const given = givenParams(options);
  if (!options.packageOnly) {
    const missing = requiredParams(String(given.kafkaAuth), options.selfManaged).filter((name) => given[name] === undefined || given[name] === '');
    if (missing.length > 0) {
      throw new Error(
        `sluice deploy needs ${missing.map((name) => `--param ${name}=…`).join(' ')} (or params.${options.stage} in ${DEPLOY_CONFIG_FILE}): ` +
          'the cluster and network the functions run in. Run with --package-only to build without them',
      );
    }
  }
  const serviceDir = serviceDirOf(options.projectDir, options.pipeline);
  for (const [folder, files] of [
    ['functions', entryFiles(serviceDir, resolve(options.pipelineFile))],
    ['plugins', pluginShims(esbuildPlugin)],
  ] as const) {
    mkdirSync(join(serviceDir, folder), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(serviceDir, folder, file), text);
  }
  const bundledCa = bundleCertificateAuthority(given, options.projectDir, serviceDir);
  writeFileSync(
    join(serviceDir, 'serverless.yml'),
    `# Written by sluice deploy for ${options.pipelineFile}; changes go in ${DEPLOY_CONFIG_FILE}.\n${JSON.stringify(serviceConfig(options, serviceDir, esbuildPlugin, bundledCa), null, 2)}\n`,
  );
  return serviceDir;
}

/**
 * `--param kafkaTlsCaFile=certs/ca.pem`: the certificate authority of a cluster whose
 * certificates do not chain to a public one, copied into the service so that every function's
 * zip holds it, where KAFKA_TLS_CA_FILE names it. Whether one was given.
 */
function bundleCertificateAuthority(given: Record<string, unknown>, projectDir: string, serviceDir: string): boolean {
  const target = join(serviceDir, BUNDLED_CA_FILE);
  rmSync(target, { force: true });
  const file = given.kafkaTlsCaFile;
  if (file === undefined || file === '') return false;
  if (typeof file !== 'string') throw new Error(`--param kafkaTlsCaFile takes the path of a PEM file, not ${JSON.stringify(file)}`);
  if (String(given.kafkaAuth).toUpperCase() === 'NONE') {
    throw new Error('--param kafkaTlsCaFile is given but kafkaAuth is NONE (plaintext): set kafkaAuth to TLS, IAM or SCRAM, or leave the certificate authority out');
  }
  const source = resolve(projectDir, file);
  let pem: string;
  try {
    pem = readFileSync(source, 'utf8');
  } catch (error) {
    throw new Error(`--param kafkaTlsCaFile=${file} cannot be read (${(error as Error).message}): give the path of the PEM file from the project's folder`, { cause: error });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--param kafkaTlsCaFile=${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, pem);
  return true;
}

export interface DeployTools {
  /** The serverless CLI's entry (osls). */
  readonly serverless: string;
  /** The serverless-esbuild plugin's folder. */
  readonly esbuildPlugin: string;
}

function toolsIn(from: string): DeployTools | undefined {
  const require = createRequire(join(from, 'package.json'));
  try {
    for (const tool of DEPLOY_TOOLS) require.resolve(`${tool}/package.json`);
    return {
      serverless: join(dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js'),
      esbuildPlugin: dirname(require.resolve('serverless-esbuild/package.json')),
    };
  } catch {
    return undefined;
  }
}

/**
 * osls, serverless-esbuild and esbuild: the project's own where it has all three, else this
 * Sluice's tested versions, installed once per machine into Sluice's cache (about 190 MB,
 * which a project that only runs offline never pays).
 */
export function deployTools(projectDir: string, log: (line: string) => void): DeployTools {
  const own = toolsIn(projectDir) ?? toolsIn(SLUICE_ROOT);
  if (own) return own;
  const { devDependencies = {} } = JSON.parse(readFileSync(join(SLUICE_ROOT, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const specs = DEPLOY_TOOLS.map((tool) => `${tool}@${(devDependencies[tool] ?? 'latest').replace(/^[\^~]/, '')}`);
  const folder = join(sluiceCacheDir(), 'deploy-tools', specs.join('+').replace(/[^A-Za-z0-9.@+-]/g, '_'));
  if (!existsSync(join(folder, '.complete'))) log(`Installing the deploy tools (${specs.join(', ')}) into ${folder}, once per machine...`);
  buildOnce(folder, (staging) => {
    writeFileSync(join(staging, 'package.json'), '{"private": true}\n');
    try {
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...specs], { cwd: staging, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8').trim() ?? '';
      throw new Error(`npm could not install the deploy tools (${specs.join(' ')}): ${stderr.split('\n').slice(-3).join(' ')}`, { cause: error });
    }
  });
  const installed = toolsIn(folder);
  if (!installed) throw new Error(`${folder} lacks the deploy tools: remove it and run sluice deploy again`);
  return installed;
}

/** Runs osls in the service's folder with the terminal attached; resolves with its exit code. */
export function runServerless(tools: DeployTools, serviceDir: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [tools.serverless, ...args], { cwd: serviceDir, env, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) => resolvePromise(code ?? 1));
  });
}
