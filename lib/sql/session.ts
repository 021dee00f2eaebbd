import type { UserFunction } from './compiled.js';
import { checkTimeZone } from './time.js';

/** What SET statements configure, with Flink's keys. */
export interface SqlSession {
  /** table.local-time-zone: how TIMESTAMP_LTZ values are shown and read. Flink's default is the machine's zone; Sluice's is UTC, the same on every Lambda. */
  zone: string;
  /** table.exec.source.idle-timeout: after how long without records a source partition stops holding the watermark back. */
  idleTimeout: number | undefined;
  /** pipeline.name */
  pipelineName: string | undefined;
  /** execution.checkpointing.interval: how often the coordinator checkpoints, and so how often exactly-once output commits. */
  checkpointInterval: number | undefined;
  /** table.exec.state.ttl: how long an unbounded aggregation keeps a key's state unread and unwritten (processing time). */
  stateTtl: number | undefined;
  /** The functions createTemporarySystemFunction registered, by upper-case name. */
  readonly functions: Map<string, UserFunction>;
}

export function defaultSession(): SqlSession {
  return { zone: 'UTC', idleTimeout: undefined, pipelineName: undefined, checkpointInterval: undefined, stateTtl: undefined, functions: new Map() };
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, second: 1000, seconds: 1000, min: 60_000, minute: 60_000, minutes: 60_000, h: 3_600_000, hour: 3_600_000, hours: 3_600_000, d: 86_400_000, day: 86_400_000, days: 86_400_000 };

/** Flink's durations: '10 s', '500 ms', '1 min', or milliseconds alone. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/.exec(text.toLowerCase());
  if (!match) return undefined;
  const unit = match[2] === '' ? 1 : DURATION_UNITS[match[2] ?? ''];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}

/** Keys Flink has that do not change what a Sluice pipeline computes: the coordinator's schedule and Lambda's scaling set those. */
const IGNORED_KEYS = new Set(['parallelism.default', 'execution.runtime-mode', 'sql-client.execution.result-mode', 'table.exec.resource.default-parallelism']);

/** Applies a SET, or says what is wrong with it. */
export function applySetting(session: SqlSession, key: string, value: string): void {
  switch (key) {
    case 'table.local-time-zone':
      checkTimeZone(value);
      session.zone = value;
      return;
    case 'table.exec.source.idle-timeout': {
      const millis = parseDuration(value);
      if (millis === undefined) throw new Error(`SET 'table.exec.source.idle-timeout' needs a duration such as '10 s', not '${value}'`);
      session.idleTimeout = millis === 0 ? undefined : millis;
      return;
    }
    case 'pipeline.name':
      session.pipelineName = value;
      return;
    case 'table.exec.state.ttl': {
      const millis = parseDuration(value);
      if (millis === undefined) throw new Error(`SET 'table.exec.state.ttl' needs a duration such as '1 h', not '${value}'`);
      session.stateTtl = millis === 0 ? undefined : millis;
      return;
    }
    case 'execution.checkpointing.interval': {
      const millis = parseDuration(value);
      if (millis === undefined || millis <= 0) throw new Error(`SET 'execution.checkpointing.interval' needs a duration such as '1 min', not '${value}'`);
      session.checkpointInterval = millis;
      return;
    }
    default:
      if (IGNORED_KEYS.has(key)) return;
      throw new Error(
        `SET '${key}' is not a key Sluice reads: it reads table.local-time-zone, table.exec.source.idle-timeout, table.exec.state.ttl, execution.checkpointing.interval and pipeline.name, and accepts ${[...IGNORED_KEYS].join(', ')}`,
      );
  }
}
