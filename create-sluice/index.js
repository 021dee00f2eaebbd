#!/usr/bin/env node
// `npm create sluice [folder]`: `sluice init` of the sluice package this one depends on.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const sluice = join(dirname(createRequire(import.meta.url).resolve('sluice/package.json')), 'bin', 'sluice.js');
const child = spawn(process.execPath, [sluice, 'init', ...process.argv.slice(2)], { stdio: 'inherit' });
child.once('exit', (code) => process.exit(code ?? 1));
