import { MIN_WATERMARK } from './time.js';

/** Picks an element's event time; `recordTimestamp` is the Kafka record's timestamp. */
export type TimestampAssigner<T> = (element: T, recordTimestamp: number) => number;

/** Where a watermark generator emits (Flink's `WatermarkOutput`). */
export interface WatermarkOutput {
  /**
   * No later element of this partition is expected at or below `watermark` (milliseconds). A
   * watermark lower than one emitted before is ignored; emitting one makes the partition active.
   */
  emitWatermark(watermark: number): void;
  /** The partition sends nothing for now: it stops holding back the source's watermark until it is active again. */
  markIdle(): void;
  markActive(): void;
}

/**
 * Tracks event time for one source partition (Flink's `WatermarkGenerator`). `onEvent` sees
 * every element with its timestamp, and may emit at once (punctuated watermarks, or watermarks
 * carried in a field); `onPeriodicEmit` is called at each emission point
 * (`env.setWatermarkEmission`: after every batch, by default).
 */
export interface WatermarkGenerator<T = unknown> {
  onEvent(event: T, eventTimestamp: number, output: WatermarkOutput): void;
  onPeriodicEmit(output: WatermarkOutput): void;
  /**
   * The generator's state as JSON, and its restore: the serverless runtime keeps it between
   * invocations. A generator without them starts afresh in every invocation; the watermark it
   * emitted last is kept either way.
   */
  snapshotState?(): unknown;
  restoreState?(state: unknown): void;
}

/**
 * When the source's generators emit, and the stage moves to the new watermark: after each
 * batch (the default), or also after every `records`-th offset of a partition. Counting by
 * offset rather than by batch keeps the emission points where they are however a retried
 * batch is cut, so a rerun judges lateness as the first run did.
 */
export type WatermarkEmission = { readonly kind: 'per-batch' } | { readonly kind: 'every-records'; readonly records: number };

export const WatermarkEmission = {
  perBatch: (): WatermarkEmission => ({ kind: 'per-batch' }),
  everyRecords: (records: number): WatermarkEmission => {
    if (!Number.isInteger(records) || records < 1) throw new Error(`WatermarkEmission.everyRecords needs a whole number ≥ 1, not ${records}`);
    return { kind: 'every-records', records };
  },
};

/**
 * How a source derives timestamps and watermarks, as Flink's `WatermarkStrategy<T>`. Each
 * source partition has its own generator; the source's watermark is the minimum over its
 * active partitions, and a partition that has been idle for the idleness timeout (in
 * processing time) stops holding it back.
 */
export class WatermarkStrategy<T> {
  private constructor(
    readonly description: string,
    readonly createGenerator: () => WatermarkGenerator<T>,
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
          onEvent: (_event, timestamp) => {
            if (timestamp > maxTimestamp) maxTimestamp = timestamp;
          },
          onPeriodicEmit: (output) => output.emitWatermark(maxTimestamp - maxOutOfOrdernessMs - 1),
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
  static forGenerator<T>(createGenerator: () => WatermarkGenerator<T>, description = 'custom watermark generator'): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(description, createGenerator, undefined, undefined, true);
  }

  /** No event time: for pipelines that use processing time only. */
  static noWatermarks<T>(): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(
      'no watermarks',
      () => ({ onEvent: () => undefined, onPeriodicEmit: () => undefined }),
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
