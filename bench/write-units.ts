// DynamoDB write units per record, by distinct keys per batch: a running sum per customer
// (bench/pipeline.ts), batches of 10,000 records through the processor's state path
// (the processor's state path, lib/testing/state-path.ts, and a shard store's commit). Units are counted by the shard store from the
// size of each item it writes, by DynamoDB's rule (one unit per started kilobyte), the same for
// every store; the in-memory one keeps the run short.
// `npm run bench:write-units [-- --batches 5]` prints the table.
import { parseArgs } from 'node:util';
import type { KafkaRecord } from '../lib/kafka/records.js';
import { planPipeline } from '../lib/plan/planner.js';
import { prepareStatePathBatch } from '../lib/testing/state-path.js';
import { MemoryShardStore } from '../lib/state/memory-shard-store.js';
import { customerTotalsPipeline } from './pipeline.js';

const BATCH = 10_000;

export interface WriteUnitsRow {
  readonly distinctKeys: number;
  readonly keyspace: number;
  readonly unitsPerRecord: number;
  readonly packsPerBatch: number;
}

const SCENARIOS = [
  { distinctKeys: 1, keyspace: 1 },
  { distinctKeys: 100, keyspace: 100 },
  { distinctKeys: 10_000, keyspace: 10_000 },
  { distinctKeys: 10_000, keyspace: 1_000_000 },
] as const;

export async function measureWriteUnits(batches: number): Promise<WriteUnitsRow[]> {
  const plan = planPipeline(customerTotalsPipeline({ name: 'write-units', brokers: ['127.0.0.1:1'], input: 'purchases', output: 'totals' }));
  const [stage] = plan.stages;
  if (!stage) throw new Error('the customer-totals pipeline has no stage');
  const rows: WriteUnitsRow[] = [];
  for (const { distinctKeys, keyspace } of SCENARIOS) {
    const store = new MemoryShardStore();
    const shard = { stage: stage.id, shard: 0 };
    let offset = 0;
    const runBatch = async (customers: readonly number[]) => {
      const records = Array.from({ length: BATCH }, (_, i): KafkaRecord => {
        const customer = `customer-${customers[i % customers.length] ?? 0}`;
        return {
          topic: 'purchases',
          partition: 0,
          offset: offset++,
          timestamp: Date.now(),
          timestampType: 'CREATE_TIME',
          key: Buffer.from(customer),
          value: Buffer.from(JSON.stringify({ customer, amount: 1 })),
          headers: [],
        };
      });
      const batch = await prepareStatePathBatch({ plan, stage, store, shard, records, clock: Date.now });
      await store.commit(batch.claim, batch.progress);
    };
    // The whole keyspace first, so that the measured batches find their keys' state.
    for (let from = 0; from < keyspace; from += BATCH) await runBatch(Array.from({ length: Math.min(BATCH, keyspace - from) }, (_, i) => from + i));
    let random = 12_345;
    const nextCustomer = () => {
      random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0;
      return random % keyspace;
    };
    const before = { ...store.requests };
    for (let i = 0; i < batches; i++) {
      const customers = new Set<number>();
      while (customers.size < distinctKeys) customers.add(distinctKeys === keyspace ? customers.size : nextCustomer());
      await runBatch([...customers]);
    }
    rows.push({
      distinctKeys,
      keyspace,
      unitsPerRecord: (store.requests.writeUnits - before.writeUnits) / (batches * BATCH),
      packsPerBatch: (store.requests.itemWrites - before.itemWrites) / batches,
    });
  }
  return rows;
}

export function formatWriteUnits(rows: readonly WriteUnitsRow[]): string {
  return [
    '| distinct keys per batch of 10,000 | keys in the shard | write units per record | pack writes per batch |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.distinctKeys.toLocaleString('en')} | ${row.keyspace.toLocaleString('en')} | ${row.unitsPerRecord.toFixed(4)} | ${row.packsPerBatch.toFixed(0)} |`,
    ),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { batches: { type: 'string', default: '5' } } });
  console.log(formatWriteUnits(await measureWriteUnits(Number(values.batches))));
}
