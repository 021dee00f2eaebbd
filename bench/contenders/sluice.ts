// Contender 3: Sluice in offline mode — the Lambda handlers with dynalite and s3rver embedded
// and the emulated MSK event source mapping — running the seed pipeline's shape on the bench
// topics with the given delivery guarantee, until every window sum is visible.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommittedRangeReader, KafkaAdmin } from '../../lib/kafka/index.js';
import { OfflineSession } from '../../lib/offline/offline.js';
import { benchPipeline } from '../pipeline.js';
import { readConfig, ready, report } from './config.js';

const config = readConfig();
const env = benchPipeline(config);

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
const started = Date.now();
const session = await OfflineSession.start({
  pipeline: env,
  out: (line) => process.stderr.write(`${line}\n`),
  stateDir,
  batchSize: config.batchSize,
  batchWindowMs: 100,
  partitions: config.partitions,
  env: { KAFKA_BROKERS: config.brokers.join(',') },
});
ready();
const reader = new CommittedRangeReader({ brokers: config.brokers });
const admin = new KafkaAdmin({ brokers: config.brokers });
let outputs = 0;
while (outputs < config.expectedWindows) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The output is small: read it whole, up to what is stable now, each round.
  const [description] = await admin.describeTopics([config.output]);
  outputs = 0;
  for (const { partition, stable } of description?.partitions ?? []) {
    const written = await reader.read({ topic: config.output, partition, from: 0, to: Number(stable) }).catch(() => []);
    outputs += written.filter((r) => !(r.key?.toString('utf8') ?? '').startsWith('closing-')).length;
  }
}
const elapsedMs = Date.now() - started;
const requests = session.runtime.requests.snapshot();
const { completed } = await session.runtime.coordinator.get();
await reader.close();
await admin.close();
await session.stop();
rmSync(stateDir, { recursive: true, force: true });
report({ elapsedMs, outputs, requests, checkpoints: completed });
process.exit(0);
