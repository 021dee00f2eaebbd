import { createHash } from 'node:crypto';
import type { Expression } from './ast.js';
import { decimalNegate, toDecimal } from './decimal.js';
import { SqlError, SqlUnsupportedError, type SqlPosition } from './errors.js';
import type { Compiled, Row, Scope } from './compiled.js';
import { commonType } from './type-rules.js';
import { byMillis, byMonths, CALENDAR_UNITS, dateOfWallClock, DAY_MILLIS, formatPattern, instantToWallClock, monthsBetween, parseByPattern, parseDate, parseWallClock, roundWallClock, wallClockOfDate, wallClockToInstant } from './time.js';
import { BIGINT, BOOLEAN, DATE, decimal, DOUBLE, INT, isInteger, isNumeric, isTemporal, plainTime, STRING, timestamp, typeName, wrapInteger, type SqlType, type SqlValue } from './types.js';
import { compareValues, widen } from './values.js';

export interface CallContext {
  readonly scope: Scope;
  readonly position: SqlPosition;
  readonly args: readonly Expression[];
}

type Kind = SqlType['kind'];
/** A function's argument kinds: one list per accepted arity ('NUMERIC' any number, 'ANY' anything). */
type Signature = readonly (Kind | 'NUMERIC' | 'ANY' | 'TEMPORAL')[];

interface ScalarDefinition {
  readonly signatures: readonly Signature[];
  /** Whether the last kind of the signature repeats (CONCAT's strings). */
  readonly variadic?: boolean;
  /** The result type from the arguments' (and the call's, to name it in an error). */
  readonly result: (args: readonly Compiled[], context: CallContext) => SqlType;
  /** The value from non-null arguments (strict functions give NULL for any NULL argument). */
  readonly apply: (values: readonly SqlValue[], args: readonly Compiled[], zone: string) => SqlValue;
  /** Functions that see NULL arguments themselves: COALESCE, CONCAT_WS, IF, NULLIF… */
  readonly lenient?: boolean;
}

const str = (v: SqlValue | undefined) => String(v);
const num = (v: SqlValue | undefined) => Number(v);
const regexCache = new Map<string, RegExp>();
function regex(pattern: string, flags = 'u'): RegExp {
  const key = `${flags}/${pattern}`;
  let compiled = regexCache.get(key);
  if (!compiled) {
    compiled = new RegExp(pattern, flags);
    regexCache.set(key, compiled);
  }
  return compiled;
}

const sameAsFirst = (args: readonly Compiled[]) => (args[0] as Compiled).type;

/** A value's wall-clock time: a TIMESTAMP_LTZ's in the session's zone, a DATE's midnight. */
function wallClockOf(value: SqlValue | undefined, arg: Compiled | undefined, zone: string): number {
  const kind = arg?.type.kind;
  return kind === 'TIMESTAMP_LTZ' ? instantToWallClock(zone, num(value)) : kind === 'DATE' ? wallClockOfDate(num(value)) : num(value);
}

/** HOUR, MINUTE or SECOND of a timestamp's wall-clock time, as a BIGINT. */
function timeField(unitMs: number, units: number): ScalarDefinition {
  return {
    signatures: [['TEMPORAL']],
    result: () => BIGINT,
    apply: ([t], [arg], zone) => {
      const wall = wallClockOf(t, arg, zone);
      return ((Math.floor(wall / unitMs) % units) + units) % units;
    },
  };
}

/** YEAR, MONTH, DAYOFWEEK…: a field of the calendar day of a DATE or of a timestamp's wall-clock time, as a BIGINT. */
function dateField(field: (day: Date) => number): ScalarDefinition {
  return { signatures: [['DATE'], ['TEMPORAL']], result: () => BIGINT, apply: ([t], [arg], zone) => field(new Date(wallClockOf(t, arg, zone))) };
}

/** ROUND's and TRUNCATE's type: a DECIMAL's scale cut to the digits kept, with a digit more before the point for a carry. */
function roundedType(args: readonly Compiled[]): SqlType {
  const type = (args[0] as Compiled).type;
  if (type.kind !== 'DECIMAL') return type;
  // The digits kept are a literal, as Flink requires: it evaluates the same for any row.
  const digits = args[1] ? Number(args[1].evaluate([])) : 0;
  const scale = Math.min(type.scale, Math.max(0, digits));
  return decimal(type.precision - type.scale + scale + (scale < type.scale ? 1 : 0), scale, type.nullable);
}

/**
 * A number cut toward zero to `digits` after the point (before it, when negative), as Flink's
 * TRUNCATE cuts a DOUBLE's decimal text (Java's BigDecimal.valueOf): 0.29 to 2 digits is 0.29.
 */
function truncateNumber(value: number, digits: number): number {
  const text = String(value);
  if (digits < 0 || !Number.isFinite(value) || text.includes('e')) {
    const unit = 10 ** -digits;
    return Math.trunc(value / unit) * unit;
  }
  const [whole = '', fraction = ''] = text.split('.');
  return Number(`${whole}.${fraction.slice(0, digits)}0`);
}

/** A DECIMAL's text cut toward zero to a scale. */
function truncateDecimal(text: string, scale: number): string {
  const [whole = '0', fraction = ''] = text.split('.');
  const kept = fraction.slice(0, scale).padEnd(scale, '0');
  const cut = scale > 0 ? `${whole}.${kept}` : whole;
  return /^-0(\.0*)?$/.test(cut) ? cut.slice(1) : cut;
}

/**
 * GREATEST (`order` 1) or LEAST (-1) of values widened to their common type: a DECIMAL's
 * compared as decimals, unless a DOUBLE made them numbers.
 */
function extreme(values: readonly SqlValue[], args: readonly Compiled[], order: 1 | -1): SqlValue {
  const decimalArg = args.find((arg) => arg.type.kind === 'DECIMAL');
  // compareValues tells decimals by their type; numbers, strings and booleans by their values.
  const type = args.some((arg) => arg.type.kind === 'DOUBLE') ? DOUBLE : (decimalArg?.type ?? STRING);
  return values.reduce((best, value) => (compareValues(value, best, type) * order > 0 ? value : best));
}

/** ROUND or TRUNCATE to the digits kept: a DECIMAL's text to as much of its scale, a number by `ofNumber` in its own type. */
function toDigits(ofDecimal: (text: string, scale: number) => SqlValue, ofNumber: (value: number, digits: number) => number): ScalarDefinition {
  return {
    signatures: [['NUMERIC'], ['NUMERIC', 'INT']],
    result: roundedType,
    apply: ([v, digits], [arg]) => {
      const { type } = arg as Compiled;
      const d = digits === undefined ? 0 : num(digits);
      if (type.kind === 'DECIMAL') return ofDecimal(str(v), Math.min(type.scale, Math.max(0, d)));
      return wrapInteger(type.kind)(ofNumber(num(v), d));
    },
  };
}

/** A function of one number, as a DOUBLE. */
function ofDouble(fn: (x: number) => number): ScalarDefinition {
  return { signatures: [['NUMERIC']], result: () => DOUBLE, apply: ([a]) => fn(num(a)) };
}

/** MD5, SHA1, SHA256: the digest of a string's UTF-8 bytes, in lowercase hex. */
function digest(algorithm: string): ScalarDefinition {
  return { signatures: [['STRING']], result: () => STRING, apply: ([s]) => createHash(algorithm).update(str(s), 'utf8').digest('hex') };
}

/** An integer in base 16 (uppercase) or 2, a negative one as its 64 bits, as Java's Long.toHexString and toBinaryString write it. */
function twosComplement(value: SqlValue | undefined, radix: 2 | 16): string {
  return BigInt.asUintN(64, BigInt(Math.trunc(num(value)))).toString(radix).toUpperCase();
}

/** The unit the parser passes TIMESTAMPADD and TIMESTAMPDIFF as their first argument, a constant. */
function unitStep(unit: SqlValue | undefined) {
  const step = CALENDAR_UNITS[String(unit)];
  if (!step) throw new Error(`no TIMESTAMPADD unit ${String(unit)}`);
  return step;
}

/**
 * TIMESTAMPADD(unit, n, t): a DATE stays a DATE but for an HOUR, MINUTE or SECOND, which make it
 * a TIMESTAMP from its midnight; a timestamp keeps its type.
 */
const TIMESTAMPADD: ScalarDefinition = {
  signatures: [['STRING', 'INT', 'DATE'], ['STRING', 'INT', 'TEMPORAL']],
  result: ([unit, , t]) => {
    const { type } = t as Compiled;
    const step = unitStep((unit as Compiled).evaluate([]));
    return type.kind === 'DATE' && 'millis' in step && step.millis < DAY_MILLIS ? timestamp('TIMESTAMP', 6) : plainTime(type);
  },
  apply: ([unit, n, t], [, , arg]) => {
    const kind = (arg as Compiled).type.kind as 'DATE' | 'TIMESTAMP' | 'TIMESTAMP_LTZ';
    const step = unitStep(unit);
    if ('months' in step) return byMonths(kind, num(n) * step.months)(num(t));
    if (kind === 'DATE' && step.millis < DAY_MILLIS) return wallClockOfDate(num(t)) + num(n) * step.millis;
    return byMillis(kind, num(n) * step.millis)(num(t));
  },
};

/**
 * TIMESTAMPDIFF(unit, a, b): whole units from a to b, truncated toward zero, as an INT; months
 * counted on the calendar (see monthsBetween).
 */
const TIMESTAMPDIFF: ScalarDefinition = {
  signatures: [['STRING', 'DATE', 'DATE'], ['STRING', 'TEMPORAL', 'TEMPORAL']],
  result: ([, a, b], { scope, position }) => {
    const [from, to] = [(a as Compiled).type, (b as Compiled).type];
    if (from.kind !== to.kind) throw new SqlError(`TIMESTAMPDIFF's operands are ${typeName(from)} and ${typeName(to)}: CAST one to the other's type`, position, scope.text);
    return INT;
  },
  apply: ([unit, a, b], [, arg]) => {
    const step = unitStep(unit);
    const millis = (value: SqlValue | undefined) => ((arg as Compiled).type.kind === 'DATE' ? wallClockOfDate(num(value)) : num(value));
    if ('months' in step) return Math.trunc(monthsBetween(millis(a), millis(b)) / step.months);
    return Math.trunc((millis(b) - millis(a)) / step.millis) | 0;
  },
};

/** The ISO week of the year (1 to 53): weeks start on Monday, and week 1 holds the year's first Thursday. */
function isoWeek(day: Date): number {
  const thursday = new Date(day.getTime() + (3 - ((day.getUTCDay() + 6) % 7)) * DAY_MILLIS);
  return Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / DAY_MILLIS / 7) + 1;
}

/** Rounds half away from zero, as Java's BigDecimal.ROUND_HALF_UP does for Flink's ROUND. */
function roundHalfUp(value: number, digits: number): number {
  const factor = 10 ** digits;
  const scaled = Math.abs(value) * factor;
  const rounded = Math.round(Number(scaled.toPrecision(15))) / factor;
  return value < 0 ? -rounded : rounded;
}

/** JSON_VALUE's path: `$`, then `.name` or `['name']` or `[index]` steps. */
function jsonPath(document: unknown, path: string): unknown {
  if (!path.startsWith('$')) return undefined;
  let node = document;
  const steps = path.slice(1).matchAll(/\.([A-Za-z_$][\w$]*)|\['([^']*)'\]|\[(\d+)\]/g);
  for (const [, name, quoted, index] of steps) {
    if (node === null || typeof node !== 'object') return undefined;
    node = index !== undefined ? (node as unknown[])[Number(index)] : (node as Record<string, unknown>)[name ?? quoted ?? ''];
  }
  return node;
}

function padded(values: readonly SqlValue[], left: boolean): SqlValue {
  const [text, length, pad] = [str(values[0] ?? ''), num(values[1] ?? 0), str(values[2] ?? '')];
  if (length < 0) return null;
  if (text.length >= length) return text.slice(0, length);
  if (pad === '') return null;
  const fill = pad.repeat(Math.ceil((length - text.length) / pad.length)).slice(0, length - text.length);
  return left ? fill + text : text + fill;
}

/** Flink's SUBSTRING: 1-based, a start ≤ 0 counting as 1 … as Flink's SqlFunctionUtils does. */
function substring(text: string, start: number, length: number | undefined): string | null {
  if (length !== undefined && length < 0) return null;
  if (start < 0 && -start > text.length) return '';
  const from = start > 0 ? start - 1 : start < 0 ? text.length + start : 0;
  return length === undefined ? text.slice(from) : text.slice(from, from + length);
}

/** FLOOR or CEIL of a DECIMAL's text, to a whole DECIMAL. */
function decimalRound(text: string, up: boolean): string {
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace(/^[-+]/, '').split('.');
  let digits = BigInt(whole) * (negative ? -1n : 1n);
  if (/[1-9]/.test(fraction)) digits += up ? (negative ? 0n : 1n) : negative ? -1n : 0n;
  return digits.toString();
}

/** FLOOR or CEIL: of a number, or of a time to a unit (FLOOR(t TO unit)), a TIMESTAMP_LTZ's wall-clock time in the session's zone. */
function floorOrCeil(up: boolean): ScalarDefinition {
  return {
    signatures: [['NUMERIC'], ['DATE', 'STRING'], ['TEMPORAL', 'STRING']],
    result: ([arg, unit]) => (unit ? plainTime((arg as Compiled).type) : decimalWhole((arg as Compiled).type)),
    apply: ([value, unit], [arg], zone) => {
      const { kind } = (arg as Compiled).type;
      if (unit !== undefined) {
        const rounded = roundWallClock(wallClockOf(value, arg, zone), str(unit), up);
        return kind === 'DATE' ? dateOfWallClock(rounded) : kind === 'TIMESTAMP_LTZ' ? wallClockToInstant(zone, rounded) : rounded;
      }
      return kind === 'DECIMAL' ? decimalRound(str(value), up) : up ? Math.ceil(num(value)) : Math.floor(num(value));
    },
  };
}

const SCALAR_FUNCTIONS: Record<string, ScalarDefinition> = {
  UPPER: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => str(s).toUpperCase() },
  LOWER: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => str(s).toLowerCase() },
  CHAR_LENGTH: { signatures: [['STRING']], result: () => INT, apply: ([s]) => Array.from(str(s)).length },
  CHARACTER_LENGTH: { signatures: [['STRING']], result: () => INT, apply: ([s]) => Array.from(str(s)).length },
  INITCAP: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => str(s).toLowerCase().replace(/(^|[^\p{L}\p{N}])(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase()) },
  TRIM: {
    signatures: [['STRING', 'STRING', 'STRING']],
    result: () => STRING,
    apply: ([side, characters, s]) => {
      const set = new Set(str(characters));
      let text = str(s);
      if (side !== 'TRAILING') while (text !== '' && set.has(text[0] as string)) text = text.slice(1);
      if (side !== 'LEADING') while (text !== '' && set.has(text[text.length - 1] as string)) text = text.slice(0, -1);
      return text;
    },
  },
  LTRIM: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => str(s).replace(/^ +/, '') },
  RTRIM: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => str(s).replace(/ +$/, '') },
  SUBSTRING: { signatures: [['STRING', 'NUMERIC'], ['STRING', 'NUMERIC', 'NUMERIC']], result: () => STRING, apply: ([s, a, b]) => substring(str(s), num(a), b === undefined ? undefined : num(b)) },
  SUBSTR: { signatures: [['STRING', 'NUMERIC'], ['STRING', 'NUMERIC', 'NUMERIC']], result: () => STRING, apply: ([s, a, b]) => substring(str(s), num(a), b === undefined ? undefined : num(b)) },
  CONCAT: { signatures: [['STRING']], variadic: true, result: () => STRING, apply: (values) => values.map(str).join('') },
  CONCAT_WS: {
    signatures: [['STRING', 'STRING']],
    variadic: true,
    lenient: true,
    result: () => STRING,
    apply: ([separator, ...values]) => (separator === null ? null : values.filter((v) => v !== null).map(str).join(str(separator))),
  },
  REPLACE: { signatures: [['STRING', 'STRING', 'STRING']], result: () => STRING, apply: ([s, a, b]) => str(s).replaceAll(str(a), () => str(b)) },
  POSITION: { signatures: [['STRING', 'STRING']], result: () => INT, apply: ([a, b]) => str(b).indexOf(str(a)) + 1 },
  LOCATE: { signatures: [['STRING', 'STRING']], result: () => INT, apply: ([a, b]) => str(b).indexOf(str(a)) + 1 },
  LPAD: { signatures: [['STRING', 'NUMERIC', 'STRING']], result: () => STRING, apply: (values) => padded(values, true) },
  RPAD: { signatures: [['STRING', 'NUMERIC', 'STRING']], result: () => STRING, apply: (values) => padded(values, false) },
  REPEAT: { signatures: [['STRING', 'NUMERIC']], result: () => STRING, apply: ([s, n]) => str(s).repeat(Math.max(0, num(n))) },
  REVERSE: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => Array.from(str(s)).reverse().join('') },
  LEFT: { signatures: [['STRING', 'INT']], result: () => STRING, apply: ([s, n]) => Array.from(str(s)).slice(0, Math.max(0, num(n))).join('') },
  RIGHT: { signatures: [['STRING', 'INT']], result: () => STRING, apply: ([s, n]) => (num(n) <= 0 ? '' : Array.from(str(s)).slice(-num(n)).join('')) },
  ASCII: { signatures: [['STRING']], result: () => INT, apply: ([s]) => str(s).charCodeAt(0) || 0 },
  CHR: { signatures: [['INT']], result: () => STRING, apply: ([n]) => (num(n) < 0 ? '' : String.fromCharCode(num(n) % 256)) },
  MD5: digest('md5'),
  SHA1: digest('sha1'),
  SHA256: digest('sha256'),
  TO_BASE64: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => Buffer.from(str(s), 'utf8').toString('base64') },
  FROM_BASE64: { signatures: [['STRING']], result: () => STRING, apply: ([s]) => Buffer.from(str(s), 'base64').toString('utf8') },
  HEX: { signatures: [['NUMERIC'], ['STRING']], result: () => STRING, apply: ([v], [arg]) => (isNumeric((arg as Compiled).type) ? twosComplement(v, 16) : Buffer.from(str(v), 'utf8').toString('hex').toUpperCase()) },
  BIN: { signatures: [['NUMERIC']], result: () => STRING, apply: ([v]) => twosComplement(v, 2) },
  SPLIT_INDEX: {
    signatures: [['STRING', 'STRING', 'NUMERIC']],
    result: () => STRING,
    apply: ([s, separator, index]) => (num(index) < 0 ? null : (str(s).split(str(separator))[num(index)] ?? null)),
  },
  REGEXP: { signatures: [['STRING', 'STRING']], result: () => BOOLEAN, apply: ([s, p]) => regex(str(p)).test(str(s)) },
  REGEXP_EXTRACT: {
    signatures: [['STRING', 'STRING'], ['STRING', 'STRING', 'NUMERIC']],
    result: () => STRING,
    apply: ([s, p, index]) => regex(str(p)).exec(str(s))?.[index === undefined ? 0 : num(index)] ?? null,
  },
  REGEXP_REPLACE: { signatures: [['STRING', 'STRING', 'STRING']], result: () => STRING, apply: ([s, p, r]) => str(s).replace(regex(str(p), 'gu'), str(r).replace(/\$(\d)/g, '$$$1')) },
  JSON_VALUE: {
    signatures: [['STRING', 'STRING']],
    result: () => STRING,
    apply: ([s, path]) => {
      let document: unknown;
      try {
        document = JSON.parse(str(s));
      } catch {
        return null;
      }
      const value = jsonPath(document, str(path));
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
    },
  },
  ABS: {
    signatures: [['NUMERIC']],
    result: sameAsFirst,
    apply: ([v], [arg]) => {
      const kind = (arg as Compiled).type.kind;
      if (kind === 'DECIMAL') return str(v).startsWith('-') ? decimalNegate(str(v)) : (v ?? null);
      // An integer kind's minimum has no positive twin: Java's Math.abs gives it back, as Flink does.
      return wrapInteger(kind)(Math.abs(num(v)));
    },
  },
  MOD: { signatures: [['NUMERIC', 'NUMERIC']], result: (args) => (args[1] as Compiled).type, apply: ([a, b]) => num(a) % num(b) },
  ROUND: toDigits((text, scale) => toDecimal(text, 38, scale), roundHalfUp),
  FLOOR: floorOrCeil(false),
  CEIL: floorOrCeil(true),
  CEILING: floorOrCeil(true),
  TRUNCATE: toDigits(truncateDecimal, truncateNumber),
  LOG2: ofDouble(Math.log2),
  LOG: { signatures: [['NUMERIC'], ['NUMERIC', 'NUMERIC']], result: () => DOUBLE, apply: ([a, b]) => (b === undefined ? Math.log(num(a)) : Math.log(num(b)) / Math.log(num(a))) },
  PI: { signatures: [[]], result: () => DOUBLE, apply: () => Math.PI },
  SIN: ofDouble(Math.sin),
  COS: ofDouble(Math.cos),
  TAN: ofDouble(Math.tan),
  COT: ofDouble((x) => 1 / Math.tan(x)),
  ASIN: ofDouble(Math.asin),
  ACOS: ofDouble(Math.acos),
  ATAN: ofDouble(Math.atan),
  ATAN2: { signatures: [['NUMERIC', 'NUMERIC']], result: () => DOUBLE, apply: ([a, b]) => Math.atan2(num(a), num(b)) },
  DEGREES: ofDouble((x) => (x * 180) / Math.PI),
  RADIANS: ofDouble((x) => (x / 180) * Math.PI),
  GREATEST: { signatures: [['ANY']], variadic: true, result: () => STRING, apply: (values, args) => extreme(values, args, 1) },
  LEAST: { signatures: [['ANY']], variadic: true, result: () => STRING, apply: (values, args) => extreme(values, args, -1) },
  POWER: { signatures: [['NUMERIC', 'NUMERIC']], result: () => DOUBLE, apply: ([a, b]) => num(a) ** num(b) },
  SQRT: ofDouble(Math.sqrt),
  LN: ofDouble(Math.log),
  LOG10: ofDouble(Math.log10),
  EXP: ofDouble(Math.exp),
  SIGN: { signatures: [['NUMERIC']], result: sameAsFirst, apply: ([a], [arg]) => ((arg as Compiled).type.kind === 'DECIMAL' ? toDecimal(String(Math.sign(num(a))), 38, 0) : Math.sign(num(a))) },
  COALESCE: { signatures: [['ANY']], variadic: true, lenient: true, result: () => STRING, apply: (values) => values.find((v) => v !== null) ?? null },
  NULLIF: { signatures: [['ANY', 'ANY']], lenient: true, result: sameAsFirst, apply: ([a, b]) => (a !== null && b !== null && String(a) === String(b) ? null : a ?? null) },
  IF: { signatures: [['BOOLEAN', 'ANY', 'ANY']], lenient: true, result: () => STRING, apply: ([c, a, b]) => (c === true ? a ?? null : b ?? null) },
  TYPEOF: { signatures: [['ANY']], lenient: true, result: () => STRING, apply: (_, [arg]) => typeName((arg as Compiled).type) },
  IS_TRUTH: { signatures: [['BOOLEAN', 'BOOLEAN']], lenient: true, result: () => BOOLEAN, apply: ([v, truth]) => v === truth },
  TO_TIMESTAMP_LTZ: {
    signatures: [['NUMERIC'], ['NUMERIC', 'INT']],
    result: () => timestamp('TIMESTAMP_LTZ', 3),
    apply: ([v, precision]) => (precision === undefined || num(precision) === 3 ? Math.trunc(num(v)) : Math.trunc(num(v) * 1000)),
  },
  TO_TIMESTAMP: {
    signatures: [['STRING']],
    result: () => timestamp('TIMESTAMP', 3),
    apply: ([s]) => parseWallClock(str(s)) ?? null,
  },
  DATE_FORMAT: {
    signatures: [['TEMPORAL', 'STRING']],
    result: () => STRING,
    apply: ([t, pattern], [arg], zone) => formatPattern(wallClockOf(t, arg, zone), str(pattern)),
  },
  TO_DATE: {
    signatures: [['STRING'], ['STRING', 'STRING']],
    result: () => DATE,
    apply: ([s, pattern]) => {
      if (pattern === undefined) return parseDate(str(s)) ?? null;
      const wall = parseByPattern(str(s), str(pattern));
      return wall === undefined ? null : dateOfWallClock(wall);
    },
  },
  TIMESTAMPADD,
  TIMESTAMPDIFF,
  YEAR: dateField((day) => day.getUTCFullYear()),
  QUARTER: dateField((day) => Math.floor(day.getUTCMonth() / 3) + 1),
  MONTH: dateField((day) => day.getUTCMonth() + 1),
  WEEK: dateField(isoWeek),
  DAYOFYEAR: dateField((day) => Math.round((day.getTime() - Date.UTC(day.getUTCFullYear(), 0, 1)) / DAY_MILLIS) + 1),
  DAYOFMONTH: dateField((day) => day.getUTCDate()),
  DAYOFWEEK: dateField((day) => day.getUTCDay() + 1),
  HOUR: timeField(3_600_000, 24),
  MINUTE: timeField(60_000, 60),
  SECOND: timeField(1_000, 60),
  FROM_UNIXTIME: {
    signatures: [['NUMERIC'], ['NUMERIC', 'STRING']],
    result: () => STRING,
    apply: ([seconds, pattern], _, zone) => formatPattern(instantToWallClock(zone, Math.trunc(num(seconds)) * 1000), pattern === undefined ? 'yyyy-MM-dd HH:mm:ss' : str(pattern)),
  },
  CONVERT_TZ: {
    signatures: [['STRING', 'STRING', 'STRING']],
    result: () => STRING,
    apply: ([s, from, to]) => {
      const wall = parseWallClock(str(s));
      return wall === undefined ? null : formatPattern(instantToWallClock(str(to), wallClockToInstant(str(from), wall)), 'yyyy-MM-dd HH:mm:ss');
    },
  },
  UNIX_TIMESTAMP: {
    signatures: [['STRING']],
    result: () => BIGINT,
    apply: ([s], _, zone) => {
      const wall = parseWallClock(str(s));
      return wall === undefined ? null : Math.floor(wallClockToInstant(zone, wall) / 1000);
    },
  },
};

function decimalWhole(type: SqlType): SqlType {
  return type.kind === 'DECIMAL' ? decimal(Math.max(1, type.precision - type.scale + (type.scale > 0 ? 1 : 0)), 0, type.nullable) : type;
}

const UNSUPPORTED_FUNCTIONS = new Set(['LISTAGG', 'COLLECT', 'FIRST_VALUE', 'LAST_VALUE', 'ROW_NUMBER', 'RANK', 'DENSE_RANK', 'LEAD', 'LAG', 'STDDEV_POP', 'STDDEV_SAMP', 'VAR_POP', 'VAR_SAMP', 'PROCTIME', 'NOW', 'JSON_QUERY', 'JSON_OBJECT', 'JSON_ARRAY', 'UUID', 'RAND', 'RAND_INTEGER']);

export const SCALAR_FUNCTION_NAMES: readonly string[] = Object.keys(SCALAR_FUNCTIONS).filter((name) => name !== 'IS_TRUTH');

function accepts(kind: Signature[number], type: SqlType): boolean {
  if (type.kind === 'NULL' || kind === 'ANY') return true;
  if (kind === 'NUMERIC') return isNumeric(type);
  if (kind === 'TEMPORAL') return isTemporal(type);
  if (kind === 'INT') return isInteger(type) && type.kind !== 'BIGINT';
  return kind === type.kind;
}

function signatureOf(definition: ScalarDefinition, args: readonly Compiled[]): Signature | undefined {
  return definition.signatures.find((signature) => {
    if (definition.variadic ? args.length < signature.length : args.length !== signature.length) return false;
    return args.every((arg, i) => accepts(signature[Math.min(i, signature.length - 1)] as Signature[number], arg.type));
  });
}

/** The result type of a function whose result is one of its arguments' (COALESCE, IF). */
function choiceType(name: string, args: readonly Compiled[], context: CallContext): SqlType {
  const choices = name === 'IF' ? args.slice(1) : args;
  return commonType(
    choices.map((a) => a.type),
    context.scope,
    context.position,
    name,
  );
}

/** Compiles a call of one of Flink's scalar functions, checking its arguments' types. */
export function scalarFunction(name: string, args: readonly Compiled[], context: CallContext): Compiled {
  const definition = SCALAR_FUNCTIONS[name];
  const { scope, position } = context;
  if (!definition) {
    if (UNSUPPORTED_FUNCTIONS.has(name)) throw new SqlUnsupportedError(`the function ${name}`, position, scope.text);
    throw new SqlError(`no function named ${name}: docs/sql.md lists the functions Sluice has`, position, scope.text);
  }
  const untypedNull = context.args.find((arg) => arg.kind === 'literal' && arg.value === null);
  if (untypedNull) throw new SqlError("illegal use of 'NULL' as an argument, as in Flink: give it a type, CAST(NULL AS STRING)", untypedNull.position, scope.text);
  if (!signatureOf(definition, args)) {
    const wanted = definition.signatures.map((s) => `${name}(${s.join(', ')}${definition.variadic ? ', …' : ''})`).join(' or ');
    throw new SqlError(`${name}(${args.map((a) => typeName(a.type)).join(', ')}) does not match ${wanted}`, position, scope.text);
  }
  // These give one of their arguments, in the arguments' common type.
  const converts = ['COALESCE', 'IF', 'GREATEST', 'LEAST'].includes(name);
  const type = converts ? choiceType(name, args, context) : definition.result(args, context);
  const { apply, lenient } = definition;
  const zone = scope.zone;
  const evaluators = args.map((arg) => (converts ? (row: Row) => widen(arg.evaluate(row), arg.type, type) : arg.evaluate));
  return {
    type: { ...type, nullable: true },
    evaluate: (row) => {
      const values = evaluators.map((evaluate) => evaluate(row));
      if (!lenient && values.includes(null)) return null;
      return apply(values, args, zone);
    },
  };
}
