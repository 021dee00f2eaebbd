// The processor handler reading and writing Avro through a schema registry, beside the same
// handler in JSON: the seed pipeline's shape, EXACTLY_ONCE, one partition, the same orders in
// both formats, in the same run. What Avro adds is decoding against the reader schema and
// encoding the sums; the registry is asked once per schema id per container, outside the count
// (in the warm-up). `npm run bench:formats` runs it alone.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ConfluentRegistryAvroDeserializationSchema, ConfluentRegistryAvroSerializationSchema, SubjectNameStrategy } from '../lib/formats/index.js';
import { KafkaAdmin } from '../lib/kafka/index.js';
import { acquireBrokers } from '../lib/offline/kafka-broker.js';
import { acquireSchemaRegistry } from '../lib/offline/schema-registry.js';
import { buildEvents, EmulatorHost, perRecord, runSluice, spread, spreadOf, type RunFigures, type Spread } from './handler.js';
import { benchTopic, ORDER_SHAPE, serializeOrder } from './orders.js';
import { benchPipeline, type Order, type WindowSum } from './pipeline.js';

const BATCH = 1_000;
const RECORDS = 100_000;

/** The bench order in Avro: the JSON order's fields, its padding too, so both carry the same content. */
const ORDER_SCHEMA = {
  type: 'record',
  name: 'BenchOrder',
  namespace: 'sluice.bench',
  fields: [
    { name: 'orderId', type: 'string' },
    { name: 'category', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'timestamp', type: 'long' },
    { name: 'pad', type: 'string', default: '' },
  ],
};

const SUM_SCHEMA = {
  type: 'record',
  name: 'WindowSum',
  namespace: 'sluice.bench',
  fields: [
    { name: 'category', type: 'string' },
    { name: 'windowStart', type: 'long' },
    { name: 'amount', type: 'double' },
  ],
};

export interface FormatFigures {
  readonly json: Spread;
  readonly avro: Spread;
  readonly batch: number;
}

export async function measureFormats({
  brokers,
  registry,
  runs,
  say,
}: {
  brokers: readonly string[];
  registry: string;
  runs: number;
  say: (line: string) => void;
}): Promise<FormatFigures> {
  const emulators = await EmulatorHost.start();
  const admin = new KafkaAdmin({ brokers: [...brokers] });
  const json: RunFigures[] = [];
  const avro: RunFigures[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const name = `bench-formats-${run}-${Date.now().toString(36)}`;
      const writer = ConfluentRegistryAvroSerializationSchema.forGeneric(SubjectNameStrategy.topicName(`${name}-avro-orders`), ORDER_SCHEMA, registry);
      await writer.open();
      const formats = {
        orders: ConfluentRegistryAvroDeserializationSchema.forSpecific<Order>(ORDER_SCHEMA, registry),
        sums: ConfluentRegistryAvroSerializationSchema.forSpecific<WindowSum>(SubjectNameStrategy.topicName(`${name}-avro-out`), SUM_SCHEMA, registry),
      };
      const topics = [`${name}-json-orders`, `${name}-json-out`, `${name}-avro-orders`, `${name}-avro-out`];
      await admin.ensureTopics(topics.map((topic) => benchTopic(topic, 1)));
      const jsonEvents = buildEvents(`${name}-json-orders`, RECORDS, BATCH, brokers);
      const avroEvents = buildEvents(`${name}-avro-orders`, RECORDS, BATCH, brokers, ({ late: _late, ...order }) =>
        writer.serialize({ ...order, pad: (JSON.parse(serializeOrder({ ...order, late: false }, ORDER_SHAPE.recordBytes)) as { pad: string }).pad }),
      );
      // Alternating which goes first spreads the machine's drift over both.
      for (const which of run % 2 === 0 ? ['json', 'avro'] : ['avro', 'json']) {
        if (which === 'json') json.push(await runSluice(brokers, emulators, 'EXACTLY_ONCE', BATCH, jsonEvents, `${name}-json`, `${name}-json-orders`));
        else avro.push(await runSluice(brokers, emulators, 'EXACTLY_ONCE', BATCH, avroEvents, `${name}-avro`, `${name}-avro-orders`, (options) => benchPipeline({ ...options, formats })));
      }
      const [inJson, inAvro] = [json.at(-1), avro.at(-1)];
      if (inJson?.windows !== inAvro?.windows) throw new Error(`JSON wrote ${inJson?.windows} window sums and Avro ${inAvro?.windows}: they do not do the same work`);
      say(`  formats, run ${run + 1}: JSON ${json.map(perRecord).at(-1)?.toFixed(1)} µs/record, Avro ${avro.map(perRecord).at(-1)?.toFixed(1)}, ${inJson?.windows} window sums each`);
      await admin.deleteTopics(topics).catch(() => undefined);
    }
  } finally {
    await admin.close();
    await emulators.stop();
  }
  return { json: spreadOf(json.map(perRecord)), avro: spreadOf(avro.map(perRecord)), batch: BATCH };
}

export function formatFormatFigures({ json, avro, batch }: FormatFigures, runs: number): string {
  return [
    `The seed pipeline's handler in Avro through a schema registry (lib/formats; Apicurio Registry, local) beside the same handler in JSON, EXACTLY_ONCE, batch ${batch.toLocaleString('en')}, ${RECORDS.toLocaleString('en')} records, CPU of the handler's process per record: median of ${runs} runs (min–max). The Avro orders carry the JSON orders' fields, padding included; the registry is asked once per schema id, in the warm-up.`,
    '',
    '| format | Sluice handler µs/record |',
    '| --- | --- |',
    `| JSON | ${spread(json)} |`,
    `| Avro (registry) | ${spread(avro)} |`,
    '',
    `handler CPU per record, EXACTLY_ONCE, batch ${batch.toLocaleString('en')}: JSON ${json.median.toFixed(1)} µs, Avro ${avro.median.toFixed(1)} µs (Avro ÷ JSON ${(avro.median / json.median).toFixed(2)})`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  const runs = Number(values.runs);
  const { brokers, release } = await acquireBrokers();
  const registry = await acquireSchemaRegistry();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    say(`\n${formatFormatFigures(await measureFormats({ brokers, registry: registry.url, runs, say }), runs)}`);
  } finally {
    await registry.release();
    await release();
  }
}
