#!/usr/bin/env node
// The `sluice` command. Pipelines are TypeScript files, so TypeScript loading is registered first.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../lib/cli/sluice.ts');
process.exitCode = await main(
  process.argv.slice(2),
  (text) => process.stdout.write(text),
  (text) => process.stderr.write(text),
);
