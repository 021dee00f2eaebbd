// `npm run bench [-- --quick] [--records N] [--partitions N]`: Sluice beside hand-written kafkajs
// pipelines and Apache Flink, on the same broker and the same pre-loaded orders, in one run.
// Each contender runs in a process of its own under /usr/bin/time (wall, CPU, peak memory);
// each one's output is checked against the expected 5-minute sums. Writes bench/results/report.md
// and bench/results/throughput.svg. Never part of npm test.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CommittedRangeReader, KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import type { ContenderConfig, ContenderResult } from './contenders/config.js';
import { costModel, formatCostModel } from './cost-model.js';
import { expectedSums, loadOrders, type OrderOptions } from './orders.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    records: { type: 'string' },
    partitions: { type: 'string', default: '4' },
    'late-fraction': { type: 'string', default: '0' },
  },
});
const records = Number(args.records ?? (args.quick ? 60_000 : 1_000_000));
const partitions = Number(args.partitions);
const CHECKPOINT_MS = 5_000;
const BATCH = 1_000;

if (!existsSync('/usr/bin/time')) throw new Error('The benchmark measures contenders with /usr/bin/time: apt-get install time');

const FLINK_DIR = 'bench/flink';
const FLINK_JAR = join(FLINK_DIR, 'target', 'flink-order-totals-1.0.0.jar');
if (!existsSync(FLINK_JAR)) {
  process.stdout.write('Building the Flink job (Maven Central, first run only)...\n');
  execFileSync('mvn', ['-q', '-B', 'package', '-DskipTests'], { cwd: FLINK_DIR, stdio: 'inherit' });
}

// No late orders by default: Flink's watermark is the minimum over all partitions, Sluice's and the
// kafkajs pipeline's are per partition, so the three would drop different late orders.
const orders: OrderOptions = {
  count: records,
  seed: 7,
  categories: 20,
  outOfOrdernessMs: 8_000,
  lateFraction: Number(args['late-fraction']),
  recordBytes: 256,
  spacingMs: 50,
};
const expected = expectedSums(orders);
const { brokers, release } = await acquireBrokers({});
const admin = new KafkaAdmin({ brokers });
const run = Date.now().toString(36);
const input = `bench-orders-${run}`;
await admin.ensureTopics([{ topic: input, partitions }]);
process.stdout.write(`Loading ${records.toLocaleString('en')} orders into ${input} (${partitions} partitions)...\n`);
await loadOrders({ brokers }, input, partitions, orders);
const inputRecords = records + partitions;

interface Contender {
  readonly name: string;
  readonly guarantee: ContenderConfig['guarantee'];
  /** Whether it writes window sums (checked against the expected ones) or copies records. */
  readonly sums: boolean;
  command(config: ContenderConfig): string[];
}

const node = (script: string) => (config: ContenderConfig) => [process.execPath, '--import', 'tsx', script, JSON.stringify(config)];
const flink = (config: ContenderConfig) => [
  'java',
  '-Xmx2g',
  '-cp',
  `${FLINK_JAR}:${join(FLINK_DIR, 'target', 'lib', '*')}`,
  'dev.sluice.bench.OrderTotalsJob',
  config.brokers.join(','),
  config.input,
  config.output,
  String(config.checkpointIntervalMs),
  String(config.partitions),
  config.guarantee,
];

const contenders: Contender[] = [
  { name: 'kafkajs raw (no state, no guarantee)', guarantee: 'NONE', sums: false, command: node('bench/contenders/kafkajs-raw.ts') },
  { name: 'kafkajs aggregate + transactions', guarantee: 'EXACTLY_ONCE', sums: true, command: node('bench/contenders/kafkajs-transactional.ts') },
  { name: 'Sluice NONE', guarantee: 'NONE', sums: true, command: node('bench/contenders/sluice.ts') },
  { name: 'Sluice AT_LEAST_ONCE', guarantee: 'AT_LEAST_ONCE', sums: true, command: node('bench/contenders/sluice.ts') },
  { name: 'Sluice EXACTLY_ONCE', guarantee: 'EXACTLY_ONCE', sums: true, command: node('bench/contenders/sluice.ts') },
  { name: 'Flink AT_LEAST_ONCE', guarantee: 'AT_LEAST_ONCE', sums: true, command: flink },
  { name: 'Flink EXACTLY_ONCE', guarantee: 'EXACTLY_ONCE', sums: true, command: flink },
];

interface Measured {
  readonly contender: Contender;
  readonly wallS: number;
  readonly cpuS: number;
  readonly peakMb: number;
  readonly result: ContenderResult | undefined;
  readonly check: string;
}

/** Runs a command under /usr/bin/time; resolves with its output and the measurements. */
function timed(command: string[]): Promise<{ output: string; wallS: number; cpuS: number; peakMb: number }> {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-bench-')), 'time');
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', file, ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', () => {
      const [wall = 0, user = 0, system = 0, rssKb = 0] = readFileSync(file, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
      resolve({ output, wallS: wall, cpuS: user + system, peakMb: rssKb / 1024 });
    });
  });
}

/** Compares the output topic, read with read_committed, with the expected sums. */
async function check(contender: Contender, output: string): Promise<string> {
  const reader = new CommittedRangeReader({ brokers });
  const [description] = await admin.describeTopics([output]);
  const written = new Map<string, number>();
  let count = 0;
  for (const { partition, high } of description?.partitions ?? []) {
    for (const record of await reader.read({ topic: output, partition, from: 0, to: Number(high) })) {
      count++;
      if (!contender.sums) continue;
      const sum = JSON.parse(record.value?.toString('utf8') ?? '{}') as { category: string; windowStart: number; amount: number };
      if (sum.category.startsWith('closing-')) continue;
      const key = `${sum.category}@${sum.windowStart}`;
      if (written.has(key)) return `${key} written twice`;
      written.set(key, sum.amount);
    }
  }
  await reader.close();
  if (!contender.sums) return count === inputRecords ? `all ${count.toLocaleString('en')} records` : `${count} of ${inputRecords} records`;
  const wrong = [...expected].filter(([key, amount]) => written.get(key) !== amount).length;
  return wrong === 0 && written.size === expected.size ? `exact (${expected.size} sums)` : `${wrong} of ${expected.size} sums wrong or missing`;
}

const measured: Measured[] = [];
for (const contender of contenders) {
  const output = `bench-out-${measured.length}-${run}`;
  await admin.ensureTopics([{ topic: output, partitions }]);
  const config: ContenderConfig = {
    brokers,
    input,
    output,
    partitions,
    records: inputRecords,
    expectedWindows: expected.size,
    guarantee: contender.guarantee,
    checkpointIntervalMs: CHECKPOINT_MS,
    batchSize: BATCH,
  };
  process.stdout.write(`${contender.name}... `);
  const { output: printed, wallS, cpuS, peakMb } = await timed(contender.command(config));
  const line = printed.split('\n').find((l) => l.startsWith('RESULT '));
  const flinkElapsed = /\{"elapsedMs":(\d+)\}/.exec(printed)?.[1];
  const result = line
    ? (JSON.parse(line.slice(7)) as ContenderResult)
    : flinkElapsed
      ? { elapsedMs: Number(flinkElapsed), outputs: expected.size }
      : undefined;
  const verdict = result ? await check(contender, output) : `failed (${printed.trim().split('\n').at(-1)?.slice(0, 120) ?? 'no output'})`;
  measured.push({ contender, wallS, cpuS, peakMb, result, check: verdict });
  process.stdout.write(`${(inputRecords / wallS).toFixed(0)} records/s, ${verdict}\n`);
  await admin.deleteTopics([output]).catch(() => undefined);
}
await admin.deleteTopics([input]).catch(() => undefined);
await admin.close();
await release();

const perCore = (m: Measured) => inputRecords / Math.max(m.cpuS, 0.001);
const byName = (name: string) => measured.find((m) => m.contender.name === name);
const raw = byName('kafkajs raw (no state, no guarantee)');
const flinkEo = byName('Flink EXACTLY_ONCE');
const ratio = (m: Measured, base: Measured | undefined) => (base ? (perCore(m) / perCore(base)).toFixed(2) : 'n/a');
const eoOverhead = (eo: string, alo: string) => {
  const [a, b] = [byName(eo), byName(alo)];
  return a && b ? (perCore(a) / perCore(b)).toFixed(2) : 'n/a';
};

const rows = measured.map(
  (m) =>
    `| ${m.contender.name} | ${(inputRecords / m.wallS).toFixed(0)} | ${m.cpuS.toFixed(1)} | ${perCore(m).toFixed(0)} | ` +
    `${ratio(m, raw)} | ${ratio(m, flinkEo)} | ${m.peakMb.toFixed(0)} | ${m.check} |`,
);
const sluiceEo = byName('Sluice EXACTLY_ONCE');
const requests = sluiceEo?.result?.requests ?? {};
const per1000 = (prefix: string) =>
  ((Object.entries(requests).reduce((n, [op, c]) => (op.startsWith(prefix) ? n + c : n), 0) / inputRecords) * 1000).toFixed(2);
const checkpoints = sluiceEo?.result?.checkpoints ?? 0;
const cost = costModel({
  recordsPerCpuSecond: sluiceEo ? perCore(sluiceEo) : 0,
  flinkRecordsPerCpuSecond: flinkEo ? perCore(flinkEo) : 0,
  requests,
  records: inputRecords,
  batchSize: BATCH,
});
const report = `# Sluice benchmark

Run ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), one local Kafka broker;
${inputRecords.toLocaleString('en')} pre-loaded orders of 256 bytes (${orders.categories} categories, ${partitions} partitions,
out-of-orderness ${orders.outOfOrdernessMs} ms, late fraction ${orders.lateFraction}); every contender computes the
5-minute category sums (the raw one copies records). Checkpoints every ${CHECKPOINT_MS} ms, batches of ${BATCH}.
Command: \`npm run bench${args.quick ? ' -- --quick' : ''}\`.

## Throughput

Records/s is input over wall time from start (Flink's and Sluice's include their start-up);
per core is input over the CPU seconds the contender's process used (the broker's are not
counted, and the same for all). Ratios compare records/s per core.

| contender | records/s | CPU s | records/s per core | ÷ kafkajs raw | ÷ Flink EO | peak MB | output |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Exactly-once overhead (records/s per core, EXACTLY_ONCE ÷ AT_LEAST_ONCE): Sluice ${eoOverhead('Sluice EXACTLY_ONCE', 'Sluice AT_LEAST_ONCE')},
Flink ${eoOverhead('Flink EXACTLY_ONCE', 'Flink AT_LEAST_ONCE')}.

Sluice EXACTLY_ONCE, AWS requests: DynamoDB ${per1000('DynamoDB.')} and S3 ${per1000('S3.')} per 1,000 records;
${checkpoints} checkpoints (${JSON.stringify(requests)}).

Sluice runs here with dynalite and s3rver embedded in its process, so its CPU includes the
emulators' work; on AWS that work is DynamoDB's and S3's.

![records/s per core](throughput.svg)

${formatCostModel(cost)}

## Not measured yet

End-to-end latency (p50/p99 from produce time to read_committed visibility, which needs a paced
input), and the scaling curves (batch size, state size, partitions).
`;
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/report.md', report);
writeFileSync('bench/results/throughput.svg', barChart(measured.map((m) => ({ label: m.contender.name, value: perCore(m) }))));
process.stdout.write(`\n${report}\nWritten to bench/results/report.md and bench/results/throughput.svg\n`);

/** A horizontal bar chart as SVG: one bar per contender. */
function barChart(bars: { label: string; value: number }[]): string {
  const max = Math.max(...bars.map((b) => b.value), 1);
  const rowHeight = 28;
  const width = 760;
  const labelWidth = 260;
  const body = bars
    .map((bar, i) => {
      const y = 30 + i * rowHeight;
      const length = ((width - labelWidth - 90) * bar.value) / max;
      return (
        `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${bar.label}</text>` +
        `<rect x="${labelWidth}" y="${y + 4}" width="${length.toFixed(1)}" height="18" fill="#3b6ea5"/>` +
        `<text x="${(labelWidth + length + 6).toFixed(1)}" y="${y + 17}">${bar.value.toFixed(0)}</text>`
      );
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + bars.length * rowHeight}" font-family="sans-serif" font-size="13">
<text x="10" y="18" font-weight="bold">Records per second per CPU core (same machine, broker and input)</text>
${body}
</svg>
`;
}
