import { MIN_WATERMARK } from './time.js';

/** Picks an element's event time; `recordTimestamp` is the Kafka record's timestamp. */
export type TimestampAssigner<T> = (element: T, recordTimestamp: number) => number;

/** Tracks event time for one source partition (Flink's `WatermarkGenerator`). */
export interface WatermarkGenerator {
  onEvent(timestamp: number): void;
  /** The watermark to emit now: no later element is expected with a timestamp at or below it. */
  currentWatermark(): number;
  /**
   * The generator's state as JSON, and its restore: the serverless runtime keeps it between
   * invocations. A generator without them starts afresh in every invocation.
   */
  snapshotState?(): unknown;
  restoreState?(state: unknown): void;
}

/**
 * How a source derives timestamps and watermarks, as Flink's `WatermarkStrategy<T>`. Each
 * source partition has its own generator; the source's watermark is the minimum over its
 * active partitions, and a partition that has been idle for the idleness timeout (in
 * processing time) stops holding it back.
 */
export class WatermarkStrategy<T> {
  private constructor(
    readonly description: string,
    readonly createGenerator: () => WatermarkGenerator,
    readonly timestampAssigner: TimestampAssigner<T> | undefined,
    readonly idlenessMs: number | undefined,
    /** False only for {@link WatermarkStrategy.noWatermarks}. */
    readonly hasWatermarks: boolean,
  ) {}

  /** Watermarks trail the highest timestamp seen by `maxOutOfOrdernessMs`. */
  static forBoundedOutOfOrderness<T>(maxOutOfOrdernessMs: number): WatermarkStrategy<T> {
    if (!Number.isInteger(maxOutOfOrdernessMs) || maxOutOfOrdernessMs < 0) {
      throw new Error(`Out-of-orderness must be a whole number of milliseconds ≥ 0, not ${maxOutOfOrdernessMs}`);
    }
    return new WatermarkStrategy<T>(
      `bounded out-of-orderness of ${maxOutOfOrdernessMs} ms`,
      () => {
        let maxTimestamp = MIN_WATERMARK + maxOutOfOrdernessMs + 1;
        return {
          onEvent: (timestamp) => {
            if (timestamp > maxTimestamp) maxTimestamp = timestamp;
          },
          currentWatermark: () => maxTimestamp - maxOutOfOrdernessMs - 1,
          snapshotState: () => maxTimestamp,
          restoreState: (state) => {
            if (typeof state === 'number') maxTimestamp = Math.max(maxTimestamp, state);
          },
        };
      },
      undefined,
      undefined,
      true,
    );
  }

  /** Timestamps never decrease within a partition. */
  static forMonotonousTimestamps<T>(): WatermarkStrategy<T> {
    return WatermarkStrategy.forBoundedOutOfOrderness<T>(0).withDescription('monotonous timestamps');
  }

  /** Watermarks from a generator of your own, one per source partition. */
  static forGenerator<T>(createGenerator: () => WatermarkGenerator, description = 'custom watermark generator'): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(description, createGenerator, undefined, undefined, true);
  }

  /** No event time: for pipelines that use processing time only. */
  static noWatermarks<T>(): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(
      'no watermarks',
      () => ({ onEvent: () => undefined, currentWatermark: () => MIN_WATERMARK }),
      undefined,
      undefined,
      false,
    );
  }

  withTimestampAssigner(assigner: TimestampAssigner<T>): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(this.description, this.createGenerator, assigner, this.idlenessMs, this.hasWatermarks);
  }

  withIdleness(idlenessMs: number): WatermarkStrategy<T> {
    if (!Number.isInteger(idlenessMs) || idlenessMs <= 0) {
      throw new Error(`Idleness must be a positive whole number of milliseconds, not ${idlenessMs}`);
    }
    return new WatermarkStrategy<T>(this.description, this.createGenerator, this.timestampAssigner, idlenessMs, this.hasWatermarks);
  }

  private withDescription(description: string): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(description, this.createGenerator, this.timestampAssigner, this.idlenessMs, this.hasWatermarks);
  }
}
