// Starts the local schema registry (Apicurio, built from Maven Central on first use) once per
// test run, or uses SCHEMA_REGISTRY_URL, and hands its URL to the tests; stops it afterwards
// only if this run started it.
import 'vitest';
import type { TestProject } from 'vitest/node';
import { acquireSchemaRegistry } from '../../lib/offline/schema-registry.js';

declare module 'vitest' {
  export interface ProvidedContext {
    schemaRegistryUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { url, release } = await acquireSchemaRegistry({ log: (line) => process.stderr.write(`[schema registry] ${line}\n`) });
  project.provide('schemaRegistryUrl', url);
  return release;
}
