import type { TypeName } from './ast.js';
import { toDecimal } from './decimal.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import type { Compiled } from './compiled.js';
import { dateOfWallClock, instantToWallClock, parseDate, parseWallClock, wallClockOfDate, wallClockToInstant } from './time.js';
import { BIGINT, BOOLEAN, DATE, decimal, DOUBLE, INT, integerRange, isDateTime, isInteger, SMALLINT, STRING, timestamp, TINYINT, wrapInteger, type IntegerKind, type SqlType, type SqlValue } from './types.js';
import { valueText } from './values.js';

const UNSUPPORTED_TYPES = new Set(['FLOAT', 'REAL', 'TIME', 'BYTES', 'BINARY', 'VARBINARY', 'ARRAY', 'MAP', 'MULTISET', 'ROW', 'RAW', 'INTERVAL', 'VARIANT']);

/** The SqlType a written type names, with Flink's defaults: DECIMAL as DECIMAL(10, 0), TIMESTAMP as TIMESTAMP(6). */
export function resolveType(type: TypeName, text: string): SqlType {
  const nullable = !type.notNull;
  const [first, second] = type.parameters;
  switch (type.name) {
    case 'STRING':
    case 'VARCHAR':
    case 'CHAR':
    case 'CHARACTER':
      return { ...STRING, nullable };
    case 'BOOLEAN':
      return { ...BOOLEAN, nullable };
    case 'TINYINT':
      return { ...TINYINT, nullable };
    case 'SMALLINT':
      return { ...SMALLINT, nullable };
    case 'INT':
    case 'INTEGER':
      return { ...INT, nullable };
    case 'BIGINT':
      return { ...BIGINT, nullable };
    case 'DOUBLE':
      return { ...DOUBLE, nullable };
    case 'DATE':
      return { ...DATE, nullable };
    case 'DECIMAL':
    case 'DEC':
    case 'NUMERIC': {
      const precision = first ?? 10;
      const scale = second ?? 0;
      if (precision < 1 || precision > 38 || scale < 0 || scale > precision) throw new SqlError(`DECIMAL(${precision}, ${scale}) is not a decimal type: precision 1 to 38, scale 0 to the precision`, type.position, text);
      return decimal(precision, scale, nullable);
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const precision = first ?? 6;
      if (precision < 0 || precision > 9) throw new SqlError(`${type.name}(${precision}) has a precision from 0 to 9`, type.position, text);
      return timestamp(type.name, precision, nullable);
    }
    default:
      if (UNSUPPORTED_TYPES.has(type.name)) throw new SqlUnsupportedError(`the type ${type.name}`, type.position, text);
      throw new SqlError(`unknown type ${type.name}`, type.position, text);
  }
}

type Conversion = (value: SqlValue) => SqlValue;

const TRUE_TEXTS = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE_TEXTS = new Set(['false', 'f', 'no', 'n', '0']);

/**
 * A value cast to an integer kind as Flink casts it: a string parsed (a decimal one truncated
 * toward zero), failing out of the kind's range; a number truncated, then narrowed as Java
 * narrows it: a DOUBLE saturates at INT's bounds first, a DECIMAL at INT's bounds for INT, and
 * otherwise the low bits are kept.
 */
function integerOf(value: SqlValue, from: SqlType, to: IntegerKind): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  const [min, max] = to === 'BIGINT' ? [-Infinity, Infinity] : integerRange(to);
  if (from.kind === 'STRING') {
    const text = String(value).trim();
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) throw new Error(`'${String(value)}' is not an integer`);
    const parsed = Math.trunc(Number(text));
    if (parsed > max || parsed < min) throw new Error(`'${text}' is out of ${to}'s range`);
    return parsed;
  }
  const truncated = Math.trunc(Number(value));
  if (to === 'BIGINT') return truncated;
  const saturated = from.kind === 'DOUBLE' || (from.kind === 'DECIMAL' && to === 'INT') ? Math.max(-2_147_483_648, Math.min(2_147_483_647, truncated)) : truncated;
  return wrapInteger(to)(saturated);
}

function numberOf(value: SqlValue, from: SqlType): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  const parsed = Number(from.kind === 'STRING' ? String(value).trim() : value);
  if (from.kind === 'STRING' && (String(value).trim() === '' || Number.isNaN(parsed))) throw new Error(`'${String(value)}' is not a number`);
  return parsed;
}

function conversion(from: SqlType, to: SqlType, zone: string): Conversion | undefined {
  const dateTime = isDateTime(from);
  switch (to.kind) {
    case 'STRING':
      return (v) => valueText(v, from, zone);
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT': {
      const kind = to.kind;
      return dateTime ? undefined : (v) => integerOf(v, from, kind);
    }
    case 'DOUBLE':
      return dateTime ? undefined : (v) => numberOf(v, from);
    case 'DECIMAL':
      if (dateTime) return undefined;
      return (v) => toDecimal(typeof v === 'boolean' ? (v ? 1 : 0) : from.kind === 'STRING' ? String(v).trim() : (v as number | string), to.precision, to.scale);
    case 'BOOLEAN':
      if (from.kind === 'STRING') {
        return (v) => {
          const text = String(v).trim().toLowerCase();
          if (TRUE_TEXTS.has(text)) return true;
          if (FALSE_TEXTS.has(text)) return false;
          throw new Error(`'${String(v)}' is not a BOOLEAN`);
        };
      }
      return dateTime ? undefined : (v) => Number(v) !== 0;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return timestampConversion(from, to, zone);
    case 'DATE':
      return dateConversion(from, zone);
    default:
      return undefined;
  }
}

/** To a DATE: a string's `yyyy-M-d`, or the day a timestamp's wall-clock time (a TIMESTAMP_LTZ's in the session's zone) falls on. */
function dateConversion(from: SqlType, zone: string): Conversion | undefined {
  switch (from.kind) {
    case 'STRING':
      return (v) => {
        const days = parseDate(String(v));
        if (days === undefined) throw new Error(`'${String(v)}' is not a date 'yyyy-MM-dd'`);
        return days;
      };
    case 'DATE':
      return (v) => v;
    case 'TIMESTAMP':
      return (v) => dateOfWallClock(v as number);
    case 'TIMESTAMP_LTZ':
      return (v) => dateOfWallClock(instantToWallClock(zone, v as number));
    default:
      return undefined;
  }
}

function timestampConversion(from: SqlType, to: Extract<SqlType, { kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ' }>, zone: string): Conversion | undefined {
  const unit = 10 ** Math.max(0, 3 - to.precision);
  const truncate = (millis: number) => Math.floor(millis / unit) * unit;
  if (from.kind === 'STRING') {
    return (v) => {
      const wall = parseWallClock(String(v));
      if (wall === undefined) throw new Error(`'${String(v)}' is not a timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]'`);
      return truncate(to.kind === 'TIMESTAMP' ? wall : wallClockToInstant(zone, wall));
    };
  }
  if (from.kind === to.kind) return (v) => truncate(v as number);
  if (from.kind === 'DATE') return to.kind === 'TIMESTAMP' ? (v) => wallClockOfDate(v as number) : (v) => wallClockToInstant(zone, wallClockOfDate(v as number));
  if (from.kind === 'TIMESTAMP') return (v) => truncate(wallClockToInstant(zone, v as number));
  if (from.kind === 'TIMESTAMP_LTZ') return (v) => truncate(instantToWallClock(zone, v as number));
  if (to.kind === 'TIMESTAMP_LTZ' && (isInteger(from) || from.kind === 'DOUBLE' || from.kind === 'DECIMAL')) {
    return (v) => truncate(Math.round(Number(v) * 1000));
  }
  return undefined;
}

/** CAST (or TRY_CAST, which gives NULL where CAST fails) of a compiled expression to a type; undefined where Flink has no such cast. */
export function castTo(operand: Compiled, target: SqlType, safe: boolean, zone: string): Compiled | undefined {
  if (operand.type.kind === 'NULL') return { type: target, evaluate: () => null };
  const convert = conversion(operand.type, target, zone);
  if (!convert) return undefined;
  const type = { ...target, nullable: target.nullable || safe || operand.type.nullable };
  return {
    type,
    evaluate: (row) => {
      const value = operand.evaluate(row);
      if (value === null) return null;
      if (!safe) return convert(value);
      try {
        return convert(value);
      } catch {
        return null;
      }
    },
  };
}
