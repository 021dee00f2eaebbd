// The Nexmark queries as whole SQL scripts: the benchmark's query (queries/qN.sql, its sink's
// WITH clause left open as ${SINK}) after the person, auction and bid tables on their Kafka
// topics. Sluice and Flink run the same script; only Flink's reads stop at the topics' end.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StreamExecutionEnvironment } from '../../lib/api/index.js';
import { sqlPipeline, type ScalarFunction } from '../../lib/sql/index.js';
import type { WindowEnd } from './compare.js';
import { EVENT_KINDS, sqlTimestamp, type Bid, type EventKind } from './generator.js';

/** The queries benched and checked, in the benchmark's order, that read the bids alone: one stage's handler benched. */
export const NEXMARK_QUERIES = ['q0', 'q1', 'q2', 'q11', 'q14', 'q15', 'q16', 'q17', 'q18', 'q19', 'q21', 'q22'] as const;
/** The queries that join two topics or repartition (q5 and q7 join the bids with an aggregation of them): benched over every stage of their pipelines. */
export const JOIN_QUERIES = ['q3', 'q4', 'q5', 'q7', 'q8', 'q9', 'q20'] as const;
export type NexmarkQuery = (typeof NEXMARK_QUERIES)[number] | (typeof JOIN_QUERIES)[number];

/** The benchmark's queries not run, and why. */
export const NOT_RUN: Readonly<Record<string, string>> = {
  q6: 'OVER … ROWS on an updating input: Flink does not run it either',
  q10: 'a filesystem sink: left out by the benchmark issue, Sluice writes Kafka',
  q12: 'processing-time windows: results depend on the wall clock, nothing to compare',
  q13: 'processing-time windows and a lookup join: results depend on the wall clock',
};

/** Where a window query's rows say which window fired them: q5 and q11 its end, q7 a bid's time in its 10-second window, q8 its start. */
export const WINDOW_END_COLUMNS: Partial<Record<NexmarkQuery, WindowEnd>> = { q5: { column: 'endtime' }, q7: { column: 'dateTime', windowMs: 10_000 }, q8: { column: 'stime', windowMs: 10_000 }, q11: { column: 'endtime' } };

const day = (ms: number) => sqlTimestamp(ms).slice(0, 10);

/**
 * What a grouping query keys its state by, as Sluice writes the key of a bid's group: bids
 * keyed so by their producer can be aggregated where they are read (`inPlace`).
 */
export const GROUP_KEYS: Partial<Record<NexmarkQuery, (bid: Bid) => string>> = {
  q11: (bid) => String(bid.bidder),
  q15: (bid) => day(bid.dateTime),
  q16: (bid) => JSON.stringify([bid.channel, day(bid.dateTime)]),
  q17: (bid) => JSON.stringify([bid.auction, day(bid.dateTime)]),
  q18: (bid) => JSON.stringify([bid.bidder, bid.auction]),
  q19: (bid) => String(bid.auction),
};

/** Bounded out-of-orderness of every table's watermark, as the benchmark's DDL. */
export const WATERMARK_DELAY_SECONDS = 4;

const COLUMNS: Record<EventKind, string> = {
  person: 'id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR',
  auction:
    'id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR',
  bid: 'auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR',
};

export interface NexmarkScriptOptions {
  readonly brokers: readonly string[];
  /** Topics `<prefix>-person`, `<prefix>-auction` and `<prefix>-bid`. */
  readonly prefix: string;
  /** The query's result topic, and the name its consumer group and transactions derive from. */
  readonly output: string;
  readonly checkpointIntervalMs: number;
  /**
   * For Flink: its reads stop at the offsets the topics end at when the job starts, so that its
   * job ends; and its transactions time out within the broker's limit (Flink asks for an hour).
   */
  readonly forFlink?: boolean;
  /**
   * Sluice aggregates where it reads, with no repartition topic: only for bids keyed by
   * GROUP_KEYS (the handler bench's, as Flink's job at parallelism 1 runs without a shuffle).
   */
  readonly inPlace?: boolean;
}

export function eventTopic(prefix: string, kind: EventKind): string {
  return `${prefix}-${kind}`;
}

export function querySql(query: NexmarkQuery): string {
  return readFileSync(fileURLToPath(new URL(`queries/${query}.sql`, import.meta.url)), 'utf8');
}

/** Whether the query's result is a changelog (an upsert sink keyed by its PRIMARY KEY) rather than appends. */
export function isUpdating(query: NexmarkQuery): boolean {
  return /PRIMARY KEY/i.test(querySql(query));
}

/**
 * The benchmark's user-defined functions, as Sluice registers them (q14's count_char). Flink's
 * script creates each from its Java class (bench/flink, `CREATE FUNCTION`), a statement Sluice's
 * script leaves out.
 */
export const NEXMARK_FUNCTIONS: Readonly<Record<string, ScalarFunction>> = {
  count_char: {
    argumentTypes: ['STRING', 'STRING'],
    resultType: 'BIGINT',
    eval: (text, character) => {
      if (text === null || character === null || character === '') return 0;
      const wanted = String(character)[0];
      let count = 0;
      for (const c of String(text)) if (c === wanted) count++;
      return count;
    },
  },
};

/** The query's pipeline on Sluice: its script, with the benchmark's functions registered. */
export function nexmarkPipeline(query: NexmarkQuery, options: Omit<NexmarkScriptOptions, 'forFlink'>): StreamExecutionEnvironment {
  return sqlPipeline(nexmarkScript(query, options), { functions: NEXMARK_FUNCTIONS });
}

/** The event kinds whose topics a pipeline reads, from its sources. */
export function sourceKinds(env: StreamExecutionEnvironment, prefix: string): EventKind[] {
  const sources = env.getTransformations().flatMap((node) => (node.kind === 'source' ? (node.source.config.topics ?? []) : []));
  return EVENT_KINDS.filter((kind) => sources.includes(eventTopic(prefix, kind)));
}

export function nexmarkScript(query: NexmarkQuery, { brokers, prefix, output, checkpointIntervalMs, forFlink = false, inPlace = false }: NexmarkScriptOptions): string {
  const servers = `'properties.bootstrap.servers' = '${brokers.join(',')}'`;
  const tables = EVENT_KINDS.map(
    (kind) => `CREATE TABLE ${kind} (${COLUMNS[kind]}, WATERMARK FOR \`dateTime\` AS \`dateTime\` - INTERVAL '${WATERMARK_DELAY_SECONDS}' SECOND) WITH (
  'connector' = 'kafka', 'topic' = '${eventTopic(prefix, kind)}', ${servers}, 'properties.group.id' = '${output}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'${forFlink ? ", 'scan.bounded.mode' = 'latest-offset'" : ''}${inPlace ? ", 'sluice.partitioned-by-key' = 'true'" : ''});`,
  );
  const exactlyOnce = `'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${output}-tx'${forFlink ? ", 'properties.transaction.timeout.ms' = '900000'" : ''}`;
  const sink = isUpdating(query)
    ? `'connector' = 'upsert-kafka', 'topic' = '${output}', ${servers}, 'key.format' = 'json', 'value.format' = 'json', ${exactlyOnce}`
    : `'connector' = 'kafka', 'topic' = '${output}', ${servers}, 'format' = 'json', ${exactlyOnce}`;
  return [
    `SET 'pipeline.name' = '${output}';`,
    `SET 'execution.checkpointing.interval' = '${checkpointIntervalMs} ms';`,
    ...tables,
    (forFlink ? querySql(query) : querySql(query).replace(/^CREATE FUNCTION [^;]*;\n/m, '')).replace('${SINK}', sink),
  ].join('\n');
}
