// `npm run bench:profile [-- --records N] [--guarantee G]`: where Sluice's time goes per record.
// Runs the Sluice contender (offline mode, dynalite and s3rver embedded) under
// `node --cpu-prof` over pre-loaded orders, then sums the profile's samples by where the code
// lives (Sluice's own folders, kafkajs, the AWS SDK, the emulators, garbage collection) and by
// function, self and inclusive. Writes bench/results/profile.md; the raw .cpuprofile stays
// beside it for Chrome DevTools or speedscope.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { parseResult } from './child-io.js';
import type { ContenderConfig } from './contenders/config.js';
import { benchTopic, expectedSums, loadOrders, ORDER_SHAPE, type OrderOptions } from './orders.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '60000' },
    guarantee: { type: 'string', default: 'EXACTLY_ONCE' },
  },
});
const records = Number(args.records);
const guarantee = args.guarantee as ContenderConfig['guarantee'];
const PARTITIONS = 4;

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a frame's code lives, for the summary by area. */
function area({ url, functionName }: ProfileNode['callFrame']): string {
  if (url === '') return functionName.startsWith('(') ? functionName : 'V8 and Node.js built-ins';
  if (url.startsWith('node:')) return 'Node.js internals';
  const lib = /\/lib\/([a-z-]+)\//.exec(url);
  if (lib && !url.includes('node_modules')) return `Sluice lib/${lib[1]}`;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (!module) return 'other';
  if (module === 'kafkajs') return 'kafkajs';
  if (module.startsWith('@aws-sdk') || module.startsWith('@smithy') || module.startsWith('@aws-crypto')) return 'AWS SDK';
  if (['dynalite', 'memdown', 'leveldown', 'levelup', 'abstract-leveldown', 'encoding-down', 'level-sublevel', 'lazy', 'big.js'].includes(module))
    return 'dynalite (DynamoDB emulator)';
  if (['s3rver', 'koa', 'xmlbuilder', 'fast-xml-parser', 'busboy'].includes(module) || module.startsWith('koa-') || module.startsWith('@koa'))
    return 's3rver (S3 emulator)';
  if (['tsx', 'esbuild', 'get-tsconfig'].includes(module)) return 'tsx (TypeScript loading)';
  return `other packages (${module})`;
}

const frameName = ({ functionName, url, lineNumber }: ProfileNode['callFrame']) =>
  `${functionName || '(anonymous)'} ${url.replace(/^.*?\/(lib|node_modules)\//, '$1/')}:${lineNumber + 1}`;

function summarize(profile: CpuProfile): { total: number; byArea: Map<string, number>; self: Map<string, number>; inclusive: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byArea = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1_000;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    total += ms;
    byArea.set(area(node.callFrame), (byArea.get(area(node.callFrame)) ?? 0) + ms);
    self.set(frameName(node.callFrame), (self.get(frameName(node.callFrame)) ?? 0) + ms);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame && area(frame).startsWith('Sluice')) onStack.add(frameName(frame));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
  });
  return { total, byArea, self, inclusive };
}

const { brokers, release } = await acquireBrokers({});
const admin = new KafkaAdmin({ brokers });
const run = Date.now().toString(36);
const [input, output] = [`bench-profile-${run}`, `bench-profile-out-${run}`];
const orders: OrderOptions = { ...ORDER_SHAPE, count: records, lateFraction: 0 };
await admin.ensureTopics([input, output].map((topic) => benchTopic(topic, PARTITIONS)));
process.stdout.write(`Loading ${records.toLocaleString('en')} orders...\n`);
await loadOrders({ brokers }, input, PARTITIONS, orders);
const config: ContenderConfig = {
  brokers,
  input,
  output,
  partitions: PARTITIONS,
  records: records + PARTITIONS,
  expectedWindows: expectedSums(orders).size,
  guarantee,
  checkpointIntervalMs: 5_000,
  batchSize: 1_000,
  paced: false,
};
const directory = mkdtempSync(join(tmpdir(), 'sluice-profile-'));
process.stdout.write(`Sluice ${guarantee} under node --cpu-prof...\n`);
const child = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', directory, '--import', 'tsx', 'bench/contenders/sluice.ts', JSON.stringify(config)], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
await admin.deleteTopics([input, output]).catch(() => undefined);
await admin.close();
await release();
if (!parseResult(child.stdout)) throw new Error(`The Sluice contender failed:\n${child.stderr.slice(-2_000)}`);

const file = readdirSync(directory).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`node --cpu-prof wrote no profile in ${directory}`);
mkdirSync('bench/results', { recursive: true });
copyFileSync(join(directory, file), 'bench/results/sluice.cpuprofile');
const { total, byArea, self, inclusive } = summarize(JSON.parse(readFileSync(join(directory, file), 'utf8')) as CpuProfile);

const perRecordUs = (ms: number) => ((ms * 1_000) / records).toFixed(1);
const table = (entries: Map<string, number>, limit: number) =>
  [...entries]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, ms]) => `| ${name.replace(/\|/g, '\\|')} | ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)}% | ${perRecordUs(ms)} |`)
    .join('\n');
const report = `# Where Sluice's time goes

\`npm run bench:profile${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`, ${new Date().toISOString()}: the Sluice contender (offline mode, ${guarantee},
${PARTITIONS} partitions, batches of 1,000, 5 s checkpoints) over ${records.toLocaleString('en')} pre-loaded orders, under
\`node --cpu-prof\`. ${total.toFixed(0)} ms of CPU sampled (idle left out), ${perRecordUs(total)} µs per record. The raw
profile is \`bench/results/sluice.cpuprofile\` (open it in Chrome DevTools or speedscope).

## By area (self time)

| area | ms | share | µs per record |
| --- | --- | --- | --- |
${table(byArea, 20)}

## Sluice's functions, inclusive (time with them on the stack)

| function | ms | share | µs per record |
| --- | --- | --- | --- |
${table(inclusive, 25)}

## Hottest functions (self time)

| function | ms | share | µs per record |
| --- | --- | --- | --- |
${table(self, 25)}
`;
writeFileSync('bench/results/profile.md', report);
process.stdout.write(`${report}\nWritten to bench/results/profile.md\n`);
