#!/usr/bin/env node
// The `sluice` command. Pipelines are TypeScript files, so TypeScript loading is registered first.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../lib/cli/sluice.ts');
const code = await main(
  process.argv.slice(2),
  (text) => process.stdout.write(text),
  (text) => process.stderr.write(text),
);
// Done: idle keep-alive sockets of the clients must not hold the command open.
process.exit(code);
