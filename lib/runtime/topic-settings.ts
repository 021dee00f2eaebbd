import { RecordTimestamp } from '../api/sink.js';
import { KafkaAdmin, type TopicWriteLimits } from '../kafka/admin.js';
import type { TopicAdmin } from '../kafka/clients.js';
import { kafkaFromEnvironment, type KafkaConnectionOptions } from '../kafka/connection.js';
import { planTopics } from '../plan/topics.js';
import type { Plan } from '../plan/plan.js';
import { RETENTION_MARGIN_MS } from './output-limits.js';

export type TopicRole = 'source' | 'sink' | 'repartition' | 'dead letter';

/** A topic of the pipeline as the brokers have it, and what in its settings will bite. */
export interface TopicSettings {
  readonly topic: string;
  readonly role: TopicRole;
  /** Absent when the topic does not exist. */
  readonly partitions?: number;
  /** The settings that decide what the topic keeps and takes; for the topics the pipeline writes. */
  readonly limits?: TopicWriteLimits;
  readonly warnings: readonly string[];
}

function days(ms: number): string {
  if (ms % 86_400_000 !== 0) return `${Math.round(ms / 3_600_000)} h`;
  return ms === 86_400_000 ? '1 day' : `${ms / 86_400_000} days`;
}

/** Sinks whose records carry the element's event time rather than the time of writing. */
function eventTimeSinks(plan: Plan): Set<string> {
  const topics = new Set<string>();
  for (const stage of plan.stages) {
    for (const node of stage.nodes) {
      if (node.role !== 'sink') continue;
      const { serializer } = node.transformation.sink.config;
      if (serializer.topic !== undefined && serializer.recordTimestamp !== RecordTimestamp.WRITE_TIME) topics.add(serializer.topic);
    }
  }
  return topics;
}

function warningsOf(limits: TopicWriteLimits | undefined, stampsEventTime: boolean): string[] {
  if (!limits || !stampsEventTime || limits.timestampType === 'LOG_APPEND_TIME') return [];
  const warnings: string[] = [];
  if (limits.retentionMs >= 0) {
    warnings.push(
      `its records carry their event time and it deletes records older than ${days(limits.retentionMs)} (retention.ms), so a batch whose ` +
        `output is older than ${days(limits.retentionMs - RETENTION_MARGIN_MS)} fails until that changes: a backfill or a restore of old ` +
        `input stops there. Stamp the write time (setRecordTimestamp(RecordTimestamp.WRITE_TIME)), raise retention.ms (-1 keeps ` +
        `everything), or set message.timestamp.type=LogAppendTime`,
    );
  }
  // Kafka's default takes any age (Long.MAX_VALUE); a lower one binds where retention does not.
  if (limits.maxPastMs < (limits.retentionMs < 0 ? Infinity : limits.retentionMs)) {
    warnings.push(`the broker refuses records more than ${days(limits.maxPastMs)} old (message.timestamp.before.max.ms), so older event times fail their batch too`);
  }
  return warnings;
}

/**
 * Reads each topic the pipeline reads or writes from the brokers: whether it exists, its
 * partitions, and for the topics it writes the settings that decide what they keep.
 */
export async function readTopicSettings(plan: Plan, admin: TopicAdmin): Promise<TopicSettings[]> {
  const topics = planTopics(plan);
  const roles = new Map<string, TopicRole>();
  for (const topic of topics.sources) roles.set(topic, 'source');
  for (const { topic } of topics.repartitions) roles.set(topic, 'repartition');
  for (const topic of topics.sinks) roles.set(topic, 'sink');
  for (const topic of topics.deadLetters) roles.set(topic, 'dead letter');
  const existing = new Set(await admin.listTopics());
  const present = [...roles.keys()].filter((topic) => existing.has(topic));
  const descriptions = await admin.describeTopics(present);
  const limits = await admin.writeLimits(present.filter((topic) => roles.get(topic) !== 'source'));
  const eventTime = eventTimeSinks(plan);
  return [...roles].map(([topic, role]): TopicSettings => {
    if (!existing.has(topic)) {
      return { topic, role, warnings: [`it does not exist on the brokers: create it (on a cluster Sluice creates no topic; sluice offline makes its own), or fix its name in the pipeline`] };
    }
    const partitions = descriptions.find((d) => d.topic === topic)?.partitions.length ?? 0;
    const written = limits.find((l) => l.topic === topic);
    const warnings = warningsOf(written, eventTime.has(topic));
    const expected = topics.repartitions.find((r) => r.topic === topic)?.partitions;
    if (expected !== undefined && expected !== partitions) {
      warnings.push(`it has ${partitions} partitions and the pipeline's parallelism makes ${expected}: the shards of the next stage would not match its keys' state`);
    }
    return { topic, role, partitions, ...(written ? { limits: written } : {}), warnings };
  });
}

/** Where to look: KAFKA_BROKERS and KAFKA_AUTH as the functions have them, else the sources' bootstrap servers. */
export function topicSettingsConnection(plan: Plan, env: NodeJS.ProcessEnv = process.env): KafkaConnectionOptions {
  const fromEnvironment = kafkaFromEnvironment(env);
  if (fromEnvironment) return fromEnvironment;
  const servers = plan.stages.flatMap((stage) => (stage.input.kind === 'source' ? stage.input.source.source.config.bootstrapServers : []));
  if (servers.length === 0) throw new Error('the pipeline reads no Kafka topic (env.fromData)');
  return { brokers: [...new Set(servers)] };
}

/**
 * {@link readTopicSettings} at `connection`, or undefined, with the reason, when the brokers do
 * not answer within `timeoutMs` (a cluster in a VPC, seen from a laptop).
 */
export async function checkTopicSettings(
  plan: Plan,
  connection: KafkaConnectionOptions,
  timeoutMs = 10_000,
): Promise<{ settings: TopicSettings[] } | { unreachable: string }> {
  const admin = new KafkaAdmin({ ...connection, connectionTimeoutMs: 3_000, requestTimeoutMs: timeoutMs, retry: { retries: 0 } });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return { settings: await Promise.race([readTopicSettings(plan, admin), timeout]) };
  } catch (error) {
    return { unreachable: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
    await admin.close().catch(() => undefined);
  }
}

function describeLimits(limits: TopicWriteLimits | undefined): string {
  if (!limits) return '';
  const retention = limits.retentionMs < 0 ? 'kept forever' : `retention ${days(limits.retentionMs)}`;
  return `, ${retention}, ${limits.timestampType === 'LOG_APPEND_TIME' ? 'LogAppendTime' : 'CreateTime'}, records up to ${limits.maxMessageBytes} bytes`;
}

/** The settings as `sluice explain` and `sluice deploy` print them. */
export function formatTopicSettings(brokers: readonly string[], result: { settings: TopicSettings[] } | { unreachable: string }): string {
  if ('unreachable' in result) return `Topics: not checked, the brokers ${brokers.join(',')} did not answer (${result.unreachable}).\n`;
  const lines = [`Topics on ${brokers.join(',')}:`];
  for (const { topic, role, partitions, limits, warnings } of result.settings) {
    lines.push(`  ${topic} (${role}): ${partitions === undefined ? 'missing' : `${partitions} partition${partitions === 1 ? "" : "s"}${describeLimits(limits)}`}`);
    for (const warning of warnings) lines.push(`    warning: ${warning}`);
  }
  return `${lines.join('\n')}\n`;
}
