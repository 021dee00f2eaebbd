import { decimalCompare, toDecimal } from './decimal.js';
import { formatDate, formatWallClock, instantToWallClock } from './time.js';
import type { SqlType, SqlValue } from './types.js';

/** A DOUBLE as Java's Double.toString shows it, as Flink's CAST to STRING and its printed rows do: 1.0, 0.001, 1.0E7. */
export function doubleText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    const text = String(value);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa = '', exponent = ''] = value.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${exponent.replace('+', '')}`;
}

/** A value as CAST(… AS STRING) gives it, in the session's time zone for a TIMESTAMP_LTZ. */
export function valueText(value: SqlValue, type: SqlType, zone: string): string | null {
  if (value === null) return null;
  switch (type.kind) {
    case 'DOUBLE':
      return doubleText(value as number);
    case 'TIMESTAMP':
      return formatWallClock(value as number, type.precision);
    case 'TIMESTAMP_LTZ':
      return formatWallClock(instantToWallClock(zone, value as number), type.precision);
    case 'DATE':
      return formatDate(value as number);
    case 'BOOLEAN':
      return value ? 'TRUE' : 'FALSE';
    default:
      return String(value);
  }
}

/** Orders two non-null values of one type (numbers, decimal text, strings by code point, booleans false first). */
export function compareValues(a: SqlValue, b: SqlValue, type: SqlType): number {
  if (type.kind === 'DECIMAL') return decimalCompare(String(a), String(b));
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A non-null value converted to a numeric type, as Flink's implicit widening does. */
export function widen(value: SqlValue, from: SqlType, to: SqlType): SqlValue {
  if (value === null || from.kind === to.kind) {
    if (value !== null && to.kind === 'DECIMAL' && from.kind === 'DECIMAL' && from.scale !== to.scale) return toDecimal(String(value), to.precision, to.scale);
    return value;
  }
  if (to.kind === 'DECIMAL') return toDecimal(value as number, to.precision, to.scale);
  if (to.kind === 'DOUBLE') return Number(value);
  return value;
}
