/** Durations and timestamps are milliseconds; these read better than bare numbers. */
export const milliseconds = (n: number): number => n;
export const seconds = (n: number): number => n * 1_000;
export const minutes = (n: number): number => n * 60_000;
export const hours = (n: number): number => n * 3_600_000;
export const days = (n: number): number => n * 86_400_000;

/** Flink's `Time.minutes(5)` spelling of the same durations, for code ported from Flink. */
export const Time = { milliseconds, seconds, minutes, hours, days } as const;

/** The lowest and highest watermarks, as in Flink (`Long.MIN_VALUE`, `Long.MAX_VALUE`). */
export const MIN_WATERMARK = Number.MIN_SAFE_INTEGER;
export const MAX_WATERMARK = Number.MAX_SAFE_INTEGER;
