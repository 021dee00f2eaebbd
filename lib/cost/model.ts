// Dollars per million records of a pipeline on Lambda, DynamoDB and S3, beside Managed Service
// for Apache Flink, from measured per-batch costs (the benchmark's, or lib/cost/reference.ts) and
// published prices. The prices say their date and region; check them before relying on a figure.

/** us-east-1 list prices as published on the AWS pricing pages (2025; check before use). */
export const PRICES = {
  asOf: 'AWS pricing pages, us-east-1, as of 2025 (on-demand DynamoDB after the November 2024 reduction)',
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  mskBrokerHour: 0.204, // kafka.m7g.large
  mskBrokers: 3,
  flinkKpuHour: 0.11, // Amazon Managed Service for Apache Flink, plus one KPU per application
  dynamoStorageGbMonth: 0.25,
  s3StorageGbMonth: 0.023,
  cloudWatchAlarmMonth: 0.1, // standard resolution
  cloudWatchDashboardMonth: 3, // beyond an account's first three
} as const;

/**
 * The coordinator function's fixed cost an hour: 256 MB busy 55 s of each minute, reading
 * the coordinator record about once a second (lib/aws/lambda-runtime.ts).
 */
const COORDINATOR_HOURLY = 0.25 * (55 / 60) * 3600 * PRICES.lambdaArmGbSecond + 3600 * PRICES.dynamoReadUnit;
/** Items a BatchGetItem reads: the categories a batch touches (20 in the benchmark). */
const ITEMS_PER_BATCH_GET = 20;
/** Lambda's largest batch, and the largest payload an invocation takes. */
const MAX_BATCH = 10_000;
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** What one provisioned event poller handles (AWS's Kafka scaling-modes page). */
const POLLER_BYTES_PER_SECOND = 5 * 1024 * 1024;
/**
 * What a checkpoint requests, by docs/PROTOCOL.md's counts rather than measured: per shard, one
 * read of its record; per checkpoint, the coordinator's writes of its record (trigger, complete),
 * the manifest's read and its two writes (complete, then again after the commit function's
 * merges), and one commit-function invocation.
 */
const CHECKPOINT = { recordReadsPerShard: 1, recordWrites: 2, manifestGets: 1, manifestPuts: 2, commitInvocationMs: 100 };
/**
 * The merges' reads and writes per delta object, amortized (docs/PROTOCOL.md, "Incremental"):
 * a merge at level L reads 8 objects and writes one, once every 8^L deltas, so over the levels
 * a delta costs 8/7 GETs and 1/7 PUTs.
 */
const MERGE_PER_DELTA = { gets: 8 / 7, puts: 1 / 7 };

/**
 * The DynamoDB write units of a batch, counted beside its requests (`BatchCost.requests`): a
 * write costs a unit per started kilobyte, and the shard record's claim and commit each rewrite
 * the whole record. Figures without it count a unit per PutItem.
 */
export const WRITE_UNITS = 'DynamoDB.WriteUnits';

/** What the handler phase measured of one batch size: one batch's modelled billed duration and its requests. */
export interface BatchCost {
  readonly batchSize: number;
  /** Billed ms of one batch at the model's memory size (bench/critical-path.ts). */
  readonly billedMs: number;
  /** DynamoDB and S3 requests of one batch, by operation. */
  readonly requests: Readonly<Record<string, number>>;
}

export interface CostInputs {
  readonly memoryMb: number;
  /** The handler phase's batch sizes (100, 1,000 and 10,000), any order. */
  readonly batches: readonly BatchCost[];
  /** Shards of the input: the source topics' partitions. */
  readonly shards: number;
  /** The pipeline's stages, each a processor over every record (an upper bound past a window or a filter). Default 1. */
  readonly stages?: number;
  /** The trigger's batch size, at most: the template's 10,000 unless the pipeline sets one. */
  readonly maxBatchSize?: number;
  readonly recordBytes: number;
  /** How long the mapping gathers a shard's records before it invokes (the latency goal's share). */
  readonly batchingWindowS: number;
  /** The latency goal that set the window (`env.setEventSourceMapping({ latencyGoalSeconds })`), when one did. */
  readonly latencyGoalS?: number;
  readonly checkpointIntervalS: number;
  /** What a container's start adds to its first batch, billed ms (bench:cold-start, beside a warm batch). */
  readonly initBilledMs: number;
  /** Container starts per shard an hour: an assumption (Lambda recycles containers after hours it does not publish). */
  readonly coldStartsPerShardHour: number;
  /** Flink EXACTLY_ONCE's measured records/s per core. */
  readonly flinkRecordsPerCpuSecond: number;
}

export interface CostRow {
  readonly rate: number;
  /** The batch the deployment runs at this rate: a shard's records in one batching window, within Lambda's limits. */
  readonly batchSize: number;
  /** Provisioned event pollers the rate would take (each 5 MB/s); the model prices on-demand polling, which MSK does not bill. */
  readonly pollers: number;
  readonly sluice: { lambda: number; init: number; coordinator: number; dynamodb: number; s3: number; checkpoints: number; total: number };
  readonly flink: { kpus: number; total: number };
  /** The cluster, the same for both, in no total and no ratio. */
  readonly cluster: number;
  /** Sluice's total ÷ Flink's, the cluster excluded. */
  readonly ratio: number;
}

/** One batch's cost at `size`, linear between the measured sizes nearest it (and past the ends, along the nearest two). */
export function batchCostAt(batches: readonly BatchCost[], size: number): BatchCost {
  const sorted = [...batches].sort((a, b) => a.batchSize - b.batchSize);
  if (sorted.length === 0) throw new Error('The cost model needs the handler phase: no batch size was measured');
  if (sorted.length === 1) return { ...(sorted[0] as BatchCost), batchSize: size };
  let index = sorted.findIndex((batch) => batch.batchSize >= size);
  index = index <= 0 ? 1 : index;
  const [low, high] = [sorted[index - 1] as BatchCost, sorted[index] as BatchCost];
  const at = (a: number, b: number) => Math.max(0, a + ((b - a) * (size - low.batchSize)) / (high.batchSize - low.batchSize));
  const operations = new Set([...Object.keys(low.requests), ...Object.keys(high.requests)]);
  return {
    batchSize: size,
    billedMs: at(low.billedMs, high.billedMs),
    requests: Object.fromEntries([...operations].map((op) => [op, at(low.requests[op] ?? 0, high.requests[op] ?? 0)])),
  };
}

/** The batch a deployment runs at `rate` records/s: a shard's records in one window, within Lambda's 10,000 records and 6 MB. */
export function batchSizeAt(rate: number, inputs: Pick<CostInputs, 'shards' | 'batchingWindowS' | 'recordBytes' | 'maxBatchSize'>): number {
  const perWindow = Math.round((rate / inputs.shards) * inputs.batchingWindowS);
  return Math.max(1, Math.min(inputs.maxBatchSize ?? MAX_BATCH, Math.floor(MAX_PAYLOAD_BYTES / inputs.recordBytes), perWindow));
}

export const MODELLED_RATES = [1_000, 10_000, 100_000] as const;

export function costModel(inputs: CostInputs, rates: readonly number[] = MODELLED_RATES): CostRow[] {
  const million = 1e6;
  const gb = inputs.memoryMb / 1_024;
  return rates.map((rate) => {
    const batchSize = batchSizeAt(rate, inputs);
    const batch = batchCostAt(inputs.batches, batchSize);
    const batches = million / batchSize;
    const requests = (op: string) => batches * (batch.requests[op] ?? 0);
    const hours = million / (rate * 3600);
    const stages = inputs.stages ?? 1;
    const lambda = stages * batches * ((batch.billedMs / 1_000) * gb * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest);
    const init = stages * hours * inputs.shards * inputs.coldStartsPerShardHour * (inputs.initBilledMs / 1_000) * gb * PRICES.lambdaArmGbSecond;
    const reads = requests('DynamoDB.GetItem') + requests('DynamoDB.BatchGetItem') * ITEMS_PER_BATCH_GET;
    const writes = batch.requests[WRITE_UNITS] === undefined ? requests('DynamoDB.PutItem') : requests(WRITE_UNITS);
    const dynamodb = stages * (writes * PRICES.dynamoWriteUnit + reads * PRICES.dynamoReadUnit);
    const deltas = requests('S3.PutObject');
    const s3 =
      stages *
      ((deltas + requests('S3.ListObjects') + deltas * MERGE_PER_DELTA.puts) * PRICES.s3Put + (requests('S3.GetObject') + deltas * MERGE_PER_DELTA.gets) * PRICES.s3Get);
    // A shard whose batches hold their deltas inline gets one object of them a checkpoint (docs/PROTOCOL.md, "Inline deltas").
    const inlineShare = Math.max(0, 1 - (batch.requests['S3.PutObject'] ?? 0));
    const checkpoints = ((hours * 3600) / inputs.checkpointIntervalS) * checkpointCost(inputs.shards * stages, inputs.memoryMb, inlineShare);
    const coordinator = hours * COORDINATOR_HOURLY;
    const pollers = Math.ceil((rate * inputs.recordBytes) / POLLER_BYTES_PER_SECOND);
    const kpus = Math.ceil(rate / Math.max(inputs.flinkRecordsPerCpuSecond, 1)) + 1;
    const flink = hours * kpus * PRICES.flinkKpuHour;
    const total = lambda + init + coordinator + dynamodb + s3 + checkpoints;
    return {
      rate,
      batchSize,
      pollers,
      sluice: { lambda, init, coordinator, dynamodb, s3, checkpoints, total },
      flink: { kpus, total: flink },
      cluster: hours * PRICES.mskBrokerHour * PRICES.mskBrokers,
      ratio: total / flink,
    };
  });
}

/**
 * One checkpoint's dollars: its record reads per shard, the coordinator's writes, the manifest,
 * the commit function, and for the `inlineShare` of shards that held their deltas inline, the
 * object of them with its share of the merges.
 */
export function checkpointCost(shards: number, memoryMb: number, inlineShare = 0): number {
  const runObjects = shards * inlineShare;
  return (
    (shards * CHECKPOINT.recordReadsPerShard) * PRICES.dynamoReadUnit +
    runObjects * ((1 + MERGE_PER_DELTA.puts) * PRICES.s3Put + MERGE_PER_DELTA.gets * PRICES.s3Get) +
    CHECKPOINT.recordWrites * PRICES.dynamoWriteUnit +
    CHECKPOINT.manifestGets * PRICES.s3Get +
    CHECKPOINT.manifestPuts * PRICES.s3Put +
    (CHECKPOINT.commitInvocationMs / 1_000) * (memoryMb / 1_024) * PRICES.lambdaArmGbSecond +
    PRICES.lambdaRequest
  );
}

/**
 * The lines a script reads: `Sluice ÷ Managed Flink, cluster excluded, 100,000 records/s: 0.87`,
 * or `…, cluster excluded, latency goal 75 s, 100,000 records/s: 0.6` when a goal set the window.
 */
export function ratioLines(rows: readonly CostRow[], latencyGoalS?: number): string {
  const goal = latencyGoalS === undefined ? '' : ` latency goal ${latencyGoalS} s,`;
  return rows.map((row) => `Sluice ÷ Managed Flink, cluster excluded,${goal} ${row.rate.toLocaleString('en')} records/s: ${row.ratio.toFixed(2)}`).join('\n');
}

export function formatCostModel(rows: readonly CostRow[], inputs: CostInputs, flinkNote: string): string {
  const usd = (value: number) => `$${value.toFixed(4)}`;
  const measured = [...inputs.batches].sort((a, b) => a.batchSize - b.batchSize);
  const goal = inputs.latencyGoalS;
  return `## Cost model: dollars per million records${goal === undefined ? '' : `, under a latency goal of ${goal} s`}

Prices: ${PRICES.asOf} — Lambda arm64 $${PRICES.lambdaArmGbSecond}/GB-s and $0.20 per million requests (INIT billed
as duration, as AWS bills it since August 2025); DynamoDB on-demand $0.625 per million writes and $0.125 per million
reads; S3 $0.005 per 1,000 PUT/LIST and $0.0004 per 1,000 GET; MSK ${PRICES.mskBrokers} × kafka.m7g.large at
$${PRICES.mskBrokerHour}/h; Managed Service for Apache Flink $${PRICES.flinkKpuHour} per KPU-hour (1 vCPU, 4 GB) plus one KPU per application.

How each rate is deployed, ${goal === undefined ? 'as the template does by default' : `as \`env.setEventSourceMapping({ latencyGoalSeconds: ${goal} })\` deploys it`}: ${inputs.shards} shards, a batching window of ${inputs.batchingWindowS} s and
batches of up to ${MAX_BATCH.toLocaleString('en')} records, so a batch is a shard's records of one window, within 6 MB; checkpoints every
${inputs.checkpointIntervalS} s; ${inputs.memoryMb.toLocaleString('en')} MB.
A batch's billed duration and requests are the handler phase's at the nearest measured sizes
(${measured.map((b) => `${b.batchSize.toLocaleString('en')}: ${b.billedMs} ms and ${Object.entries(b.requests).reduce((n, [op, c]) => (op === WRITE_UNITS ? n : n + c), 0).toFixed(1)} requests`).join('; ')}),
linear between them. INIT: ${inputs.initBilledMs} ms billed per container start (bench:cold-start, beside a warm batch),
${inputs.coldStartsPerShardHour} start per shard an hour (assumed). Checkpoints by docs/PROTOCOL.md's counts: ${usd(checkpointCost(inputs.shards, inputs.memoryMb, 1) * 1e3)} per thousand
checkpoints of ${inputs.shards} shards that held their deltas inline (an object of them per shard), and the merges' reads and writes per object.
DynamoDB writes are the batch's measured write units (a unit per started kilobyte of each record and pack written). Polling: on-demand, which Lambda does not
bill for MSK; the pollers column is what provisioned mode would hold (5 MB/s each), not priced here.
Flink: KPUs from its measured records/s per core, ${Math.round(inputs.flinkRecordsPerCpuSecond).toLocaleString('en')} (${flinkNote}).
The cluster is the same for both, in its own column and in no total.

| records/s | batch | Lambda | INIT | coordinator | DynamoDB | S3 | checkpoints | **Sluice** | Flink KPUs | **Flink** | Sluice ÷ Flink | pollers | cluster |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows
  .map(
    (r) =>
      `| ${r.rate.toLocaleString('en')} | ${r.batchSize.toLocaleString('en')} | ${usd(r.sluice.lambda)} | ${usd(r.sluice.init)} | ${usd(r.sluice.coordinator)} | ` +
      `${usd(r.sluice.dynamodb)} | ${usd(r.sluice.s3)} | ${usd(r.sluice.checkpoints)} | **${usd(r.sluice.total)}** | ${r.flink.kpus} | **${usd(r.flink.total)}** | ` +
      `${r.ratio.toFixed(2)} | ${r.pollers} | ${usd(r.cluster)} |`,
  )
  .join('\n')}

${ratioLines(rows, goal)}
`;
}

const HOURS_PER_MONTH = 730;

export interface IdleInputs {
  /** The deployment's CloudWatch alarms (the seed pipeline's template has 10) and dashboards (1). */
  readonly alarms: number;
  readonly dashboards: number;
  /** What the state table and the snapshot bucket hold. */
  readonly stateGb: number;
  readonly snapshotGb: number;
}

export interface IdleCost {
  /** At rest (docs/PROTOCOL.md, "At rest"): no function runs; storage and the alarms and dashboard remain. */
  readonly atRest: { readonly functions: number; readonly storage: number; readonly monitoring: number; readonly total: number };
  /** Without rest: the coordinator runs 55 s of every minute with nothing to do. */
  readonly awake: number;
  /** Managed Flink's smallest application, idle: one KPU and the application's own. */
  readonly flink: number;
}

/** What a deployed pipeline with no input costs a month, beside the cluster (which both share). */
export function idleCostPerMonth(inputs: IdleInputs): IdleCost {
  const storage = inputs.stateGb * PRICES.dynamoStorageGbMonth + inputs.snapshotGb * PRICES.s3StorageGbMonth;
  const monitoring = inputs.alarms * PRICES.cloudWatchAlarmMonth + inputs.dashboards * PRICES.cloudWatchDashboardMonth;
  return {
    atRest: { functions: 0, storage, monitoring, total: storage + monitoring },
    awake: COORDINATOR_HOURLY * HOURS_PER_MONTH + storage + monitoring,
    flink: 2 * PRICES.flinkKpuHour * HOURS_PER_MONTH,
  };
}

export function formatIdleCost(inputs: IdleInputs): string {
  const cost = idleCostPerMonth(inputs);
  const usd = (value: number) => `$${value.toFixed(2)}`;
  return `## Idle cost: dollars a month with no input, beside the cluster

For ${inputs.stateGb} GB of state, ${inputs.snapshotGb} GB of snapshots, ${inputs.alarms} alarms and ${inputs.dashboards} dashboard (${PRICES.asOf};
DynamoDB $${PRICES.dynamoStorageGbMonth}/GB-month, S3 $${PRICES.s3StorageGbMonth}/GB-month, alarms $${PRICES.cloudWatchAlarmMonth} each, a dashboard $${PRICES.cloudWatchDashboardMonth}).

| | functions | storage | alarms and dashboard | **total** |
| --- | --- | --- | --- | --- |
| Sluice at rest | ${usd(cost.atRest.functions)} | ${usd(cost.atRest.storage)} | ${usd(cost.atRest.monitoring)} | **${usd(cost.atRest.total)}** |
| Sluice without rest (the coordinator awake) | ${usd(cost.awake - cost.atRest.total)} | ${usd(cost.atRest.storage)} | ${usd(cost.atRest.monitoring)} | **${usd(cost.awake)}** |
| Managed Service for Apache Flink, 1 KPU + 1 | — | — | — | **${usd(cost.flink)}** |
`;
}

/** The seed pipeline's deployment: its template's 10 alarms and dashboard, with a gigabyte each of state and snapshots. */
export const SEED_DEPLOYMENT_IDLE: IdleInputs = { alarms: 10, dashboards: 1, stateGb: 1, snapshotGb: 1 };
