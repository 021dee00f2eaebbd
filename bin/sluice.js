#!/usr/bin/env node
// The `sluice` command. Pipelines are TypeScript files, so TypeScript loading is registered first.
import { register } from 'tsx/esm/api';

// On this machine the AWS SDK talks to emulators or reads status; its ten-line notice that it
// will need Node 22 says nothing about the pipeline (the functions run on nodejs22.x or newer).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

register();
const { main } = await import('../lib/cli/sluice.ts');
const code = await main(
  process.argv.slice(2),
  (text) => process.stdout.write(text),
  (text) => process.stderr.write(text),
);
// Done: idle keep-alive sockets of the clients must not hold the command open.
process.exit(code);
