import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * In this repository `sluice` and its subpaths are its own sources, as tsconfig.json's `paths`
 * map them for tsc, tsx and esbuild; the published package maps them to dist/ instead.
 */
const { compilerOptions } = JSON.parse(readFileSync('tsconfig.json', 'utf8')) as { compilerOptions: { paths: Record<string, [string]> } };
const selfReferences = Object.entries(compilerOptions.paths).map(([specifier, [target]]) => ({
  find: new RegExp(`^${specifier.replace('/', '\\/')}$`),
  replacement: resolve(target),
}));

export default defineConfig({
  resolve: { alias: selfReferences },
  test: {
    globalSetup: ['test/setup/kafka-broker.ts', 'test/setup/schema-registry.ts', 'test/setup/python-tools.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    testTimeout: 60_000,
    // The AWS SDK's notice that it will need Node 22 would fill the output of every test process.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // The first start on a fresh machine fetches the broker and builds the schema registry from Maven Central.
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: 'main', include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/simulation/**/*.test.ts', 'test/conformance/**/*.test.ts'], sequence: { groupOrder: 0 } } },
      // Tests that restart the shared broker run alone, once every other test is done.
      { extends: true, test: { name: 'disruptive', include: ['test/disruptive/**/*.test.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
