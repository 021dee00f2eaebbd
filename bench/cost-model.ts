// Dollars per million records on AWS for the seed pipeline, from the benchmark's measurements
// and published prices. The prices are written in the report with their date and region; this
// machine cannot reach aws.amazon.com, so check them before relying on the figures.
import { pathToFileURL } from 'node:url';

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

export interface CostInputs {
  /** The processor's modelled billed duration of a batch of `batchSize` records (bench/critical-path.ts), at `memoryMb`. */
  readonly billedMsPerBatch: number;
  readonly memoryMb: number;
  readonly flinkRecordsPerCpuSecond: number;
  readonly requests: Readonly<Record<string, number>>;
  readonly records: number;
  readonly batchSize: number;
}

export interface CostRow {
  readonly rate: number;
  readonly sluice: { lambda: number; coordinator: number; dynamodb: number; s3: number; msk: number; total: number };
  readonly flink: { kpus: number; flink: number; msk: number; total: number };
}

export function costModel(inputs: CostInputs): CostRow[] {
  const perRecord = (op: string) => (inputs.requests[op] ?? 0) / inputs.records;
  const million = 1e6;
  return [1_000, 10_000, 100_000].map((rate) => {
    const gbSecondsPerRecord = (inputs.billedMsPerBatch / 1_000 / inputs.batchSize) * (inputs.memoryMb / 1_024);
    const lambda = million * (gbSecondsPerRecord * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest / inputs.batchSize);
    const reads = perRecord('DynamoDB.GetItem') + perRecord('DynamoDB.BatchGetItem') * ITEMS_PER_BATCH_GET;
    const dynamodb = million * (perRecord('DynamoDB.PutItem') * PRICES.dynamoWriteUnit + reads * PRICES.dynamoReadUnit);
    const s3 = million * ((perRecord('S3.PutObject') + perRecord('S3.ListObjects')) * PRICES.s3Put + perRecord('S3.GetObject') * PRICES.s3Get);
    const hours = million / (rate * 3600);
    const coordinator = hours * COORDINATOR_HOURLY;
    const msk = hours * PRICES.mskBrokerHour * PRICES.mskBrokers;
    const kpus = Math.ceil(rate / Math.max(inputs.flinkRecordsPerCpuSecond, 1)) + 1;
    const flink = hours * kpus * PRICES.flinkKpuHour;
    return {
      rate,
      sluice: { lambda, coordinator, dynamodb, s3, msk, total: lambda + coordinator + dynamodb + s3 + msk },
      flink: { kpus, flink, msk, total: flink + msk },
    };
  });
}

export function formatCostModel(rows: readonly CostRow[], inputs: Pick<CostInputs, 'billedMsPerBatch' | 'memoryMb' | 'batchSize'>): string {
  const usd = (value: number) => `$${value.toFixed(4)}`;
  return `## Cost model: dollars per million records

Prices: ${PRICES.asOf} — Lambda arm64 $${PRICES.lambdaArmGbSecond}/GB-s and $0.20 per million requests; DynamoDB
on-demand $0.625 per million writes and $0.125 per million reads; S3 $0.005 per 1,000 PUT/LIST and $0.0004 per 1,000
GET; MSK ${PRICES.mskBrokers} × kafka.m7g.large at $${PRICES.mskBrokerHour}/h; Managed Service for Apache Flink
$${PRICES.flinkKpuHour} per KPU-hour (1 vCPU, 4 GB) plus one KPU per application.

Assumptions: Sluice's Lambda time is the processor's modelled billed duration of a batch of
${inputs.batchSize.toLocaleString('en')}, ${inputs.billedMsPerBatch} ms at ${inputs.memoryMb.toLocaleString('en')} MB (the handler table: its own CPU, not the emulators', plus its
round trips at assumed AWS latencies; warm containers); DynamoDB and S3 requests per record as
measured over the throughput run; the coordinator function, 256 MB running 55 s of each minute, costs $${COORDINATOR_HOURLY.toFixed(4)} an hour; a BatchGetItem reads ${ITEMS_PER_BATCH_GET} items. Flink needs as many KPUs as its measured records/s per
core implies. The cluster costs the same for both.

| records/s | Sluice Lambda | coordinator | DynamoDB | S3 | MSK | **Sluice total** | Flink KPUs | Flink | MSK | **Flink total** |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows
  .map(
    (r) =>
      `| ${r.rate.toLocaleString('en')} | ${usd(r.sluice.lambda)} | ${usd(r.sluice.coordinator)} | ${usd(r.sluice.dynamodb)} | ${usd(r.sluice.s3)} | ${usd(r.sluice.msk)} | ` +
      `**${usd(r.sluice.total)}** | ${r.flink.kpus} | ${usd(r.flink.flink)} | ${usd(r.flink.msk)} | **${usd(r.flink.total)}** |`,
  )
  .join('\n')}
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

// `npx tsx bench/cost-model.ts` prints the idle cost of the seed pipeline's deployment.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.stdout.write(formatIdleCost(SEED_DEPLOYMENT_IDLE));
