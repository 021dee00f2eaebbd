import { describe, expect, it } from 'vitest';
import { OffsetResetStrategy, OffsetsInitializer, StreamExecutionEnvironment } from '../../../lib/api/index.js';
import { triggerStartingPosition } from '../../../lib/plan/trigger-position.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');

describe('a trigger’s starting position', () => {
  it('starts no later than the source’s offsets initializer, in the units Lambda takes', () => {
    expect(triggerStartingPosition(OffsetsInitializer.earliest(), NOW)).toEqual({ startingPosition: 'TRIM_HORIZON' });
    expect(triggerStartingPosition(OffsetsInitializer.latest(), NOW)).toEqual({ startingPosition: 'LATEST' });
    expect(triggerStartingPosition(OffsetsInitializer.committedOffsets(OffsetResetStrategy.LATEST), NOW)).toEqual({ startingPosition: 'LATEST' });
    expect(triggerStartingPosition(OffsetsInitializer.committedOffsets(), NOW)).toEqual({ startingPosition: 'TRIM_HORIZON' });
    // Rounded down to a whole second: the shard skips the records before the millisecond.
    expect(triggerStartingPosition(OffsetsInitializer.timestamp(NOW - 1_500), NOW)).toEqual({
      startingPosition: 'AT_TIMESTAMP',
      startingPositionTimestamp: (NOW - 2_000) / 1000,
    });
    // Lambda refuses a timestamp in the future; nothing is in the log after the end yet.
    expect(triggerStartingPosition(OffsetsInitializer.timestamp(NOW + 60_000), NOW)).toEqual({ startingPosition: 'LATEST' });
  });
});

describe('env.setEventSourceMapping', () => {
  const env = () => StreamExecutionEnvironment.create({ name: 'p' });

  it('keeps what it is given', () => {
    const options = { batchSize: 10_000, maximumBatchingWindowSeconds: 0, provisionedPollers: { minimum: 1, maximum: 1_000 } };
    expect(env().setEventSourceMapping(options).getEventSourceMapping()).toEqual(options);
  });

  it('refuses what Lambda or the serverless CLI would, saying the range', () => {
    expect(() => env().setEventSourceMapping({ batchSize: 10_001 })).toThrow('env.setEventSourceMapping: batchSize must be a whole number from 1 to 10000, not 10001');
    expect(() => env().setEventSourceMapping({ maximumBatchingWindowSeconds: 0.5 })).toThrow(
      'maximumBatchingWindowSeconds must be a whole number from 0 to 300, not 0.5',
    );
    expect(() => env().setEventSourceMapping({ provisionedPollers: { minimum: 201, maximum: 300 } })).toThrow('provisionedPollers.minimum must be a whole number from 1 to 200');
    expect(() => env().setEventSourceMapping({ provisionedPollers: { minimum: 5, maximum: 2 } })).toThrow('provisionedPollers.minimum (5) exceeds its maximum (2)');
  });
});
