import type { Plan } from '../plan/plan.js';
import { costModel, PRICES, WRITE_UNITS, type BatchCost, type CostInputs, type CostRow } from './model.js';

/**
 * What the benchmark measured of one stage of the seed pipeline (a keyed 5-minute window sum,
 * EXACTLY_ONCE, 20 keys a batch): a batch's modelled billed duration at 1,024 MB, its DynamoDB
 * and S3 requests and its DynamoDB write units, what a cold start adds, and Flink EXACTLY_ONCE's
 * records/s per core on the same pipeline. A pipeline with more CPU per record, or more keys changed per batch, costs more.
 */
export const REFERENCE_FIGURES = {
  measured:
    'the seed pipeline, `npm run bench -- --quick --only handler,throughput` of 2026-12-07 on 2 cores; ' +
    "Flink's records/s per core from the full `npm run bench` of 2026-12-03",
  memoryMb: 1_024,
  batches: [
    { batchSize: 100, billedMs: 27, requests: { 'DynamoDB.GetItem': 1.8, 'DynamoDB.PutItem': 3, 'DynamoDB.BatchGetItem': 1, [WRITE_UNITS]: 6.1 } },
    { batchSize: 1_000, billedMs: 41, requests: { 'DynamoDB.GetItem': 1.3, 'DynamoDB.PutItem': 3, 'DynamoDB.BatchGetItem': 1, [WRITE_UNITS]: 5.2 } },
    { batchSize: 10_000, billedMs: 176, requests: { 'DynamoDB.GetItem': 2, 'DynamoDB.PutItem': 3, 'DynamoDB.BatchGetItem': 1, [WRITE_UNITS]: 5 } },
  ] satisfies BatchCost[],
  initBilledMs: 432,
  flinkRecordsPerCpuSecond: 71_378,
} as const;

/** The template's batching where the pipeline sets none (lib/cli/deploy.ts). */
const TEMPLATE_BATCH = { size: 10_000, windowS: 1 };

export interface PipelineCostOptions {
  /** Records a second into the pipeline's sources. */
  readonly rate: number;
  /** A record's size, for Lambda's 6 MB payload and the pollers. Default 256. */
  readonly recordBytes?: number;
  /** The source topics' partitions. Default 4. */
  readonly shards?: number;
}

export interface PipelineCost {
  readonly inputs: CostInputs;
  readonly row: CostRow;
}

/** The modelled cost of `plan` at a rate, from {@link REFERENCE_FIGURES}: each stage a processor over every record. */
export function pipelineCost(plan: Plan, { rate, recordBytes = 256, shards = 4 }: PipelineCostOptions): PipelineCost {
  const { batchSize, maximumBatchingWindowSeconds, latencyGoalSeconds } = plan.eventSourceMapping;
  const inputs: CostInputs = {
    memoryMb: REFERENCE_FIGURES.memoryMb,
    batches: REFERENCE_FIGURES.batches,
    shards,
    stages: plan.stages.length,
    maxBatchSize: batchSize ?? TEMPLATE_BATCH.size,
    recordBytes,
    // A window of 0 s still gathers what one poll returns; a tenth of a second stands in for it.
    batchingWindowS: Math.max(maximumBatchingWindowSeconds ?? TEMPLATE_BATCH.windowS, 0.1),
    ...(latencyGoalSeconds === undefined ? {} : { latencyGoalS: latencyGoalSeconds }),
    checkpointIntervalS: plan.checkpointing.intervalMs / 1_000,
    initBilledMs: REFERENCE_FIGURES.initBilledMs,
    coldStartsPerShardHour: 1,
    flinkRecordsPerCpuSecond: REFERENCE_FIGURES.flinkRecordsPerCpuSecond,
  };
  const [row] = costModel(inputs, [rate]);
  if (!row) throw new Error('the cost model gave no row');
  return { inputs, row };
}

const HOURS_PER_MONTH = 730;

/** What `sluice cost` prints: dollars per million records and a month, by part, beside Managed Flink, the cluster apart. */
export function formatPipelineCost(plan: Plan, { inputs, row }: PipelineCost): string {
  const perMonth = (perMillion: number) => (perMillion * row.rate * 3600 * HOURS_PER_MONTH) / 1e6;
  const money = (perMillion: number) => `$${perMillion.toFixed(4)} a million, $${perMonth(perMillion).toFixed(2)} a month`;
  const parts: [string, number][] = [
    ['Lambda (processors)', row.sluice.lambda],
    ['INIT', row.sluice.init],
    ['coordinator', row.sluice.coordinator],
    ['DynamoDB', row.sluice.dynamodb],
    ['S3', row.sluice.s3],
    ['checkpoints', row.sluice.checkpoints],
  ];
  return `${plan.pipeline} at ${row.rate.toLocaleString('en')} records/s: ${plan.stages.length} stage${plan.stages.length === 1 ? '' : 's'} on ${inputs.shards} shards, batches of ${row.batchSize.toLocaleString('en')} (a ${inputs.batchingWindowS} s window${inputs.latencyGoalS === undefined ? '' : ` for a latency goal of ${inputs.latencyGoalS} s`}, at most ${(inputs.maxBatchSize ?? 0).toLocaleString('en')}), checkpoints every ${inputs.checkpointIntervalS} s, ${inputs.memoryMb.toLocaleString('en')} MB

Sluice on Lambda, DynamoDB and S3:
${parts.map(([part, value]) => `  ${part.padEnd(21)}${money(value)}`).join('\n')}
  ${'total'.padEnd(21)}${money(row.sluice.total)}
Managed Service for Apache Flink, ${row.flink.kpus} KPUs: ${money(row.flink.total)}
The Kafka cluster (${PRICES.mskBrokers} × kafka.m7g.large), for either: ${money(row.cluster)}

Sluice ÷ Managed Flink, cluster excluded, ${row.rate.toLocaleString('en')} records/s: ${row.ratio.toFixed(2)}

Prices: ${PRICES.asOf}. Per-batch costs: ${REFERENCE_FIGURES.measured}; each stage is counted as a processor over every record, an upper bound for stages past a window or a filter.
Polling is on-demand (not billed for MSK); provisioned mode would hold ${row.pollers} poller${row.pollers === 1 ? '' : 's'}, not priced here.
`;
}
