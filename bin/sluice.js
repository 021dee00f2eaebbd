#!/usr/bin/env node
// The `sluice` command. Pipelines are TypeScript files, so TypeScript loading is registered first.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

// A pipeline is planned by the classes of the sluice it imports, so the project's own sluice
// runs the command when this one (a global install, another project's) is not it.
const here = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..'));
let projects;
try {
  projects = realpathSync(dirname(createRequire(join(process.cwd(), 'package.json')).resolve('sluice/package.json')));
} catch {
  projects = here;
}
if (projects !== here) {
  const child = spawn(process.execPath, [join(projects, 'bin', 'sluice.js'), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.once('exit', (code) => process.exit(code ?? 1));
} else {
  await run();
}

async function run() {
  // On this machine the AWS SDK talks to emulators or reads status; its ten-line notice that it
  // will need Node 22 says nothing about the pipeline (the functions run on nodejs22.x or newer).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  register();
  // A checkout of Sluice runs the CLI from its sources; the installed package ships only dist/.
  const sources = join(here, 'lib', 'cli', 'sluice.ts');
  const { main } = await import(existsSync(sources) ? pathToFileURL(sources).href : '../dist/cli/sluice.js');
  const code = await main(
    process.argv.slice(2),
    (text) => process.stdout.write(text),
    (text) => process.stderr.write(text),
  );
  // Done: idle keep-alive sockets of the clients must not hold the command open.
  process.exit(code);
}
