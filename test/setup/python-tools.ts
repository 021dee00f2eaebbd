// Makes the project's Python environment (moto's server, cfn-lint; lib/offline/python-tools.ts)
// once per test run, before any test file asks for it, and hands its paths to the tests.
import 'vitest';
import type { TestProject } from 'vitest/node';
import { ensurePythonTools, type PythonTools } from '../../lib/offline/python-tools.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pythonTools: PythonTools;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('pythonTools', await ensurePythonTools({ log: (line) => process.stderr.write(`[python] ${line}\n`) }));
}
