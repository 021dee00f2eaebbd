// The processor handler running the seed pipeline's shape written in Flink SQL, beside the same
// pipeline in TypeScript: EXACTLY_ONCE, one partition keyed by category, the same orders, in the
// same run. What SQL adds is its rows (arrays of column values) and its compiled expressions in
// place of the TypeScript job's objects and functions. `npm run bench:sql [-- --runs 3]`.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { buildEvents, EmulatorHost, perRecord, runSluice, spread, spreadOf, type RunFigures, type Spread } from './handler.js';
import { benchTopic } from './orders.js';
import { benchPipeline, benchSqlPipeline } from './pipeline.js';

const BATCH = 1_000;
const RECORDS = 100_000;

export interface SqlFigures {
  readonly typescript: Spread;
  readonly sql: Spread;
  readonly batch: number;
}

export async function measureSql({ brokers, runs, say }: { brokers: readonly string[]; runs: number; say: (line: string) => void }): Promise<SqlFigures> {
  const emulators = await EmulatorHost.start();
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const typescript: RunFigures[] = [];
  const sql: RunFigures[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const name = `bench-sql-${run}-${Date.now().toString(36)}`;
      const topics = [`${name}-orders`, `${name}-ts-out`, `${name}-sql-out`];
      await admin.ensureTopics(topics.map((topic) => benchTopic(topic, 1)));
      const events = buildEvents(`${name}-orders`, RECORDS, BATCH, brokers);
      // Alternating which goes first spreads the machine's drift over both.
      for (const which of run % 2 === 0 ? ['ts', 'sql'] : ['sql', 'ts']) {
        if (which === 'ts') typescript.push(await runSluice(brokers, emulators, 'EXACTLY_ONCE', BATCH, events, `${name}-ts`, `${name}-orders`, benchPipeline));
        else sql.push(await runSluice(brokers, emulators, 'EXACTLY_ONCE', BATCH, events, `${name}-sql`, `${name}-orders`, benchSqlPipeline));
      }
      const [inTypeScript, inSql] = [typescript.at(-1), sql.at(-1)];
      if (inTypeScript?.windows !== inSql?.windows) throw new Error(`TypeScript wrote ${inTypeScript?.windows} window sums and SQL ${inSql?.windows}: they do not do the same work`);
      say(`  sql, run ${run + 1}: TypeScript ${typescript.map(perRecord).at(-1)?.toFixed(1)} µs/record, SQL ${sql.map(perRecord).at(-1)?.toFixed(1)}, ${inSql?.windows} window sums each`);
      await admin.deleteTopics(topics).catch(() => undefined);
    }
  } finally {
    await admin.close();
    await emulators.stop();
  }
  return { typescript: spreadOf(typescript.map(perRecord)), sql: spreadOf(sql.map(perRecord)), batch: BATCH };
}

export function formatSqlFigures({ typescript, sql, batch }: SqlFigures, runs: number): string {
  return [
    `The seed pipeline's shape in Flink SQL (lib/sql) beside the same pipeline in TypeScript, EXACTLY_ONCE, batch ${batch.toLocaleString('en')}, ${RECORDS.toLocaleString('en')} records, CPU of the handler's process per record: median of ${runs} runs (min–max).`,
    '',
    '| pipeline | Sluice handler µs/record |',
    '| --- | --- |',
    `| TypeScript | ${spread(typescript)} |`,
    `| SQL | ${spread(sql)} |`,
    '',
    `handler CPU per record, EXACTLY_ONCE, batch ${batch.toLocaleString('en')}: TypeScript ${typescript.median.toFixed(1)} µs, SQL ${sql.median.toFixed(1)} µs (SQL ÷ TypeScript ${(sql.median / typescript.median).toFixed(2)})`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  const runs = Number(values.runs);
  const { brokers, release } = await acquireBrokers();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    say(`\n${formatSqlFigures(await measureSql({ brokers, runs, say }), runs)}`);
  } finally {
    await release();
  }
}
