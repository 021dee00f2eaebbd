import type { OffsetsInitializer } from '../api/source.js';

/** Where Lambda's event-source mapping of a source stage starts, when its consumer group has no offsets yet. */
export interface TriggerStartingPosition {
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP';
  /** With AT_TIMESTAMP: Unix seconds, as the mapping takes them. */
  readonly startingPositionTimestamp?: number;
}

/**
 * The trigger's starting position for a source's offsets initializer. The processor resolves
 * the initializer itself on a shard's first batch and skips what comes before, so the
 * mapping only has to start no later than that: it then never delivers a backlog the shard
 * would discard (from `latest`), and never starts past records the shard must read.
 */
export function triggerStartingPosition(initializer: OffsetsInitializer, now: number): TriggerStartingPosition {
  switch (initializer.kind) {
    case 'earliest':
      return { startingPosition: 'TRIM_HORIZON' };
    case 'latest':
      return { startingPosition: 'LATEST' };
    case 'timestamp':
      // Lambda refuses a timestamp in the future; the log's end is no later than it.
      if (initializer.timestamp > now) return { startingPosition: 'LATEST' };
      // Whole seconds, rounded down: at most a second's records early, which the shard skips.
      return { startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp: Math.floor(initializer.timestamp / 1000) };
    case 'committed':
      // The group's committed offsets win over any starting position (Lambda's rule as Kafka's).
      return { startingPosition: initializer.resetStrategy === 'LATEST' ? 'LATEST' : 'TRIM_HORIZON' };
  }
}
