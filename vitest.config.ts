import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/kafka-broker.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    testTimeout: 60_000,
    // The first start on a fresh machine fetches the broker from Maven Central.
    hookTimeout: 300_000,
  },
});
