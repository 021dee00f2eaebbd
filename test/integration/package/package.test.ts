// Sluice as a team installs it: `npm pack` of this repository, the tarball installed into a
// project in a temporary folder outside it (none of this repository's files or node_modules in
// reach, and a Python without packages first on PATH), `sluice init`, the new project's own
// `npm test`, `sluice offline` until committed output appears, and `sluice deploy
// --package-only`, whose template passes cfn-lint and whose bundle holds the user's pipeline,
// its own module and its npm dependency, and none of the CLI's tools. Then what a new user gets
// wrong, each refused in one line.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { testBrokers, uniqueName } from '../../helpers/kafka.js';

const exec = promisify(execFile);
const REPOSITORY = join(import.meta.dirname, '..', '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'sluice-user-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The user's shell: node and npm, a Python with no packages first, the system's tools; no AWS credentials. */
function userEnvironment(emptyPython: string): NodeJS.ProcessEnv {
  return {
    HOME: process.env.HOME,
    PATH: [join(emptyPython, 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    KAFKA_BROKERS: testBrokers().join(','),
    NO_COLOR: '1',
    AWS_PROFILE: 'none',
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
    ...(process.env.SLUICE_CACHE_DIR ? { SLUICE_CACHE_DIR: process.env.SLUICE_CACHE_DIR } : {}),
    ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
  };
}

/** A command's outcome, failed or not, for asserting on what it said. */
async function attempt(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await exec(command, [...args], { cwd, env, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? 1, stdout, stderr };
  }
}

async function succeed(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  const result = await attempt(command, args, cwd, env);
  expect(result.code, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

/** Runs `sluice offline` until its first committed output line; the seconds that took. */
function offlineUntilOutput(cwd: string, env: NodeJS.ProcessEnv, file: string): Promise<{ seconds: number; line: string }> {
  const started = Date.now();
  // The bin itself rather than npx, so that Ctrl-C's SIGINT reaches it and it stops as it would at a terminal.
  const child = spawn(join(cwd, 'node_modules', '.bin', 'sluice'), ['offline', file, '--print-output', '--for', '240'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  return new Promise((resolve, reject) => {
    let found: { seconds: number; line: string } | undefined;
    const onData = (chunk: Buffer) => {
      printed += chunk.toString('utf8');
      const line = printed.split('\n').find((text) => /^\S+-order-aggregates: \{/.test(text));
      if (line && !found) {
        found = { seconds: (Date.now() - started) / 1_000, line };
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    child.once('exit', (code) => (found ? resolve(found) : reject(new Error(`sluice offline exited (${code}) before any output:\n${printed.slice(-4_000)}`))));
  });
}

/** Every file below `folder`, as paths relative to it. */
function filesBelow(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((path) => statSync(join(folder, path)).isFile());
}

describe('the sluice package, installed in a project of its own', () => {
  it('inits a project whose tests pass, runs it offline to committed output, and packages it for Lambda', async () => {
    const emptyPython = join(scratch, 'python');
    await exec('python3', ['-m', 'venv', '--without-pip', emptyPython]);
    const env = userEnvironment(emptyPython);
    await succeed('python3', ['-c', 'import sys; assert sys.prefix != sys.base_prefix'], scratch, env);

    const packed = await succeed('npm', ['pack', '--json', '--pack-destination', scratch], REPOSITORY, process.env);
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    const tarball = join(scratch, filename);
    // What ships: the build, the bin, the recipes and templates; never the tests, the benchmarks or the sources.
    expect(files.filter(({ path }) => /^(test|bench|lib|examples|docs|scripts|api)\//.test(path) || (path.endsWith('.test.ts') && !path.startsWith('templates/')))).toEqual([]);
    expect(files.map(({ path }) => path)).toEqual(expect.arrayContaining(['bin/sluice.js', 'dist/index.js', 'dist/index.d.ts', 'templates/project/pipelines/orders.ts']));

    const tools = join(scratch, 'tools');
    mkdirSync(tools);
    writeFileSync(join(tools, 'package.json'), '{"private": true}\n');
    await succeed('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], tools, env);
    const project = join(scratch, 'my-pipelines');
    const initStarted = Date.now();
    const init = await succeed('npx', ['sluice', 'init', project], tools, env);
    expect(init.stdout).toContain('npm test');
    expect(filesBelow(project).sort()).toEqual(['.gitignore', 'README.md', 'package.json', 'pipelines/orders.ts', 'test/orders.test.ts', 'tsconfig.json']);
    expect(readFileSync(join(project, 'README.md'), 'utf8')).toContain('npm install && npx sluice offline pipelines/orders.ts');

    await succeed('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], project, env);
    const tests = await succeed('npm', ['test'], project, env);
    expect(tests.stdout).toMatch(/Tests\s+2 passed/);
    await succeed('npx', ['tsc'], project, env);

    // A pipeline of the user's own: its names made unique on the shared test broker, a module of
    // the project's and a package from its node_modules.
    const prefix = uniqueName('user');
    mkdirSync(join(project, 'vendor', 'shout'), { recursive: true });
    writeFileSync(join(project, 'vendor', 'shout', 'package.json'), '{"name": "shout", "version": "1.0.0", "type": "module", "main": "index.js"}\n');
    writeFileSync(join(project, 'vendor', 'shout', 'index.js'), "export const shout = (text) => `${text.toUpperCase()} (shouted by the shout package)`;\n");
    await succeed('npm', ['install', '--no-audit', '--no-fund', './vendor/shout'], project, env);
    writeFileSync(join(project, 'pipelines', 'naming.ts'), "import { shout } from 'shout';\n\nexport const categoryLabel = (category: string): string => shout(`${category} (labelled by pipelines/naming.ts)`);\n");
    writeFileSync(join(project, 'shout.d.ts'), "declare module 'shout' {\n  export function shout(text: string): string;\n}\n");
    writeFileSync(join(project, 'tsconfig.json'), readFileSync(join(project, 'tsconfig.json'), 'utf8').replace('"include": ["pipelines", "test"]', '"include": ["pipelines", "test", "shout.d.ts"]'));
    const seed = readFileSync(join(project, 'pipelines', 'orders.ts'), 'utf8');
    const renamed = seed
      .replace(/'(orders|order-aggregates|order-processor|order-agg-tx)'/g, `'${prefix}-$1'`)
      .replace("import {\n  CheckpointingMode,", "import { categoryLabel } from './naming.js';\nimport {\n  CheckpointingMode,")
      .replace('category: total.category, windowStart', 'category: total.category, label: categoryLabel(total.category), windowStart');
    expect(renamed).toContain('categoryLabel(total.category)');
    writeFileSync(join(project, 'pipelines', 'orders.ts'), renamed);

    const { seconds, line } = await offlineUntilOutput(project, env, 'pipelines/orders.ts');
    expect((JSON.parse(line.slice(line.indexOf('{'))) as { label?: string }).label).toMatch(/^[A-Z]+ \(LABELLED BY PIPELINES\/NAMING\.TS\) \(shouted by the shout package\)$/);
    process.stderr.write(`[package] sluice init to the first committed output: ${((Date.now() - initStarted) / 1_000).toFixed(1)} s (offline: ${seconds.toFixed(1)} s)\n`);

    // The other commands read the project's state: here the offline run's, in its .sluice/.
    const status = await succeed('npx', ['sluice', 'status', 'pipelines/orders.ts', '--offline', '--json'], project, env);
    expect((JSON.parse(status.stdout) as { checkpoints: { committed: number } }).checkpoints.committed).toBeGreaterThan(0);

    const packageDir = join(scratch, 'package');
    await succeed('npx', ['sluice', 'deploy', 'pipelines/orders.ts', '--package-only', '--package', packageDir], project, env);
    const template = join(packageDir, 'cloudformation-template-update-stack.json');
    const lint = await attempt(join(inject('pythonTools').bin, 'cfn-lint'), [template], scratch, process.env);
    // cfn-lint's exit code is a bit mask: 2 errors, 4 warnings, 8 informational.
    expect(lint.code & 2, lint.stdout).toBe(0);
    const sizes = readdirSync(packageDir).filter((name) => name.endsWith('.zip')).map((name) => `${name} ${statSync(join(packageDir, name)).size}`);
    process.stderr.write(`[package] zips: ${sizes.join(', ')}\n`);

    // The processor's bundle, unzipped where no node_modules is in reach, loads and builds the user's pipeline.
    const unzipped = join(scratch, 'lambda');
    await exec(inject('pythonTools').python, ['-m', 'zipfile', '-e', join(packageDir, 'processorstage1.zip'), unzipped]);
    const bundle = readFileSync(join(unzipped, 'functions', 'processor.mjs'), 'utf8');
    expect(bundle).toContain('labelled by pipelines/naming.ts');
    expect(bundle).toContain('shouted by the shout package');
    expect(['dynalite', 's3rver', 'tsx/esm', 'serverless-esbuild', 'typescript.js', 'osls'].filter((name) => bundle.includes(name))).toEqual([]);
    const loaded = await attempt(
      process.execPath,
      ['--input-type=module', '-e', `const { handler } = await import(${JSON.stringify(join(unzipped, 'functions', 'processor.mjs'))}); console.log(typeof handler);`],
      unzipped,
      { PATH: '/usr/bin:/bin', SLUICE_STAGE: 'stage-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    );
    expect(loaded, loaded.stderr).toMatchObject({ code: 0, stdout: 'function\n' });
    // Without its stage the bundle fails at once; the kept source maps read its trace back to the sources.
    const failed = await attempt(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(join(unzipped, 'functions', 'processor.mjs'))})`], unzipped, { PATH: '/usr/bin:/bin' });
    expect(failed.stderr).toMatch(/at requiredEnvironment \(file:.*functions\/processor\.mjs:\d+:\d+\)/);
    const symbolicated = await new Promise<string>((resolve, reject) => {
      const child = spawn(join(project, 'node_modules', '.bin', 'sluice'), ['symbolicate', packageDir], { cwd: project, env, stdio: ['pipe', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      child.once('error', reject);
      child.once('exit', () => resolve(text));
      child.stdin.end(failed.stderr);
    });
    expect(symbolicated).toMatch(/at requiredEnvironment \(\S*aws\/environment\.(ts|js):\d+:\d+\)/);

    // What a new user gets wrong: one clear line each, and nothing half-written.
    const sluice = (...args: string[]) => attempt('npx', ['sluice', ...args], project, env);
    const nonEmpty = await sluice('init', '.');
    expect(nonEmpty.code).toBe(1);
    expect(nonEmpty.stderr).toMatch(/^sluice init: error: \. is not empty \(.*\): sluice init writes a new project/);

    writeFileSync(join(project, 'pipelines', 'no-export.ts'), "export const nothing = 1;\n");
    expect(await sluice('explain', 'pipelines/no-export.ts', '--no-brokers')).toMatchObject({
      code: 1,
      stderr: 'sluice explain: error: pipelines/no-export.ts has no default export of a StreamExecutionEnvironment: end the file with `export default env`\n',
    });

    writeFileSync(join(project, 'pipelines', 'typo.ts'), seed.replace(".setTopics('orders')", '.setTopics(42)'));
    const typo = await sluice('offline', 'pipelines/typo.ts');
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/^sluice offline: invalid pipeline: pipelines\/typo\.ts does not type-check; fix it, or pass --no-type-check/);
    expect(typo.stderr).toMatch(/pipelines\/typo\.ts:\d+:\d+: error TS2345: Argument of type 'number' is not assignable to parameter of type 'string \| readonly string\[\]'\.\n$/);

    writeFileSync(join(project, 'pipelines', 'missing-package.ts'), `import 'left-pad';\n${seed}`);
    const missing = await sluice('explain', 'pipelines/missing-package.ts', '--no-brokers', '--no-type-check');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^sluice explain: error: pipelines\/missing-package\.ts imports the package left-pad, which is not installed .*: npm install left-pad\n$/);

    writeFileSync(join(project, 'pipelines', 'same-name.ts'), seed.replace(/'(orders|order-aggregates|order-processor|order-agg-tx)'/g, `'${prefix}-$1'`));
    const twice = await sluice('deploy', 'pipelines/same-name.ts', '--package-only');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`pipelines/same-name.ts and pipelines/orders.ts both name their pipeline "${prefix}-orders"`);

    const unconfigured = await sluice('deploy', 'pipelines/orders.ts', '--stage', 'prod');
    expect(unconfigured.code).toBe(1);
    expect(unconfigured.stderr).toContain(
      'sluice deploy needs --param mskClusterArn=… --param mskClusterName=… --param mskClusterUuid=… --param kafkaBootstrapServers=… --param subnetIdA=… --param subnetIdB=… --param securityGroupId=… (or params.prod in sluice.deploy.yml)',
    );

    // npm create sluice: the create-sluice package runs the init of the sluice it depends on.
    const created = await succeed('npm', ['pack', '--json', '--pack-destination', scratch], join(REPOSITORY, 'create-sluice'), process.env);
    const [{ filename: creator }] = JSON.parse(created.stdout.slice(created.stdout.indexOf('['))) as [{ filename: string }];
    await succeed('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, join(scratch, creator)], tools, env);
    await succeed('npx', ['create-sluice', 'second'], tools, env);
    expect(filesBelow(join(tools, 'second')).sort()).toEqual(['.gitignore', 'README.md', 'package.json', 'pipelines/orders.ts', 'test/orders.test.ts', 'tsconfig.json']);
  }, 900_000);
});
