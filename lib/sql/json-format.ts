import { toDecimal } from './decimal.js';
import type { Field } from './compiled.js';
import { formatDate, formatWallClock, parseDate, parseWallClock } from './time.js';
import { integerRange, typeName, type SqlType, type SqlValue } from './types.js';
import { doubleText } from './values.js';

/** Flink's `json` format options that Sluice reads. */
export interface JsonFormatOptions {
  /** json.fail-on-missing-field: a missing field fails the record instead of reading as NULL. */
  readonly failOnMissingField: boolean;
  /** json.timestamp-format.standard: 'SQL' (yyyy-MM-dd HH:mm:ss.SSS) or 'ISO-8601' (yyyy-MM-ddTHH:mm:ss.SSS). */
  readonly timestampStandard: 'SQL' | 'ISO-8601';
}

function fieldValue(node: unknown, type: SqlType): SqlValue {
  if (node === null || node === undefined) return null;
  switch (type.kind) {
    case 'STRING':
      return typeof node === 'string' ? node : JSON.stringify(node);
    case 'BOOLEAN':
      if (typeof node === 'boolean') return node;
      if (node === 'true' || node === 'false') return node === 'true';
      break;
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT': {
      const value = typeof node === 'string' ? Number(node.trim()) : node;
      const [min, max] = type.kind === 'BIGINT' ? [-Infinity, Infinity] : integerRange(type.kind);
      if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
      break;
    }
    case 'DOUBLE': {
      const value = typeof node === 'string' ? Number(node.trim()) : node;
      if (typeof value === 'number' && !Number.isNaN(value)) return value;
      break;
    }
    case 'DECIMAL':
      if (typeof node === 'number' || (typeof node === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(node))) {
        return toDecimal(typeof node === 'number' ? node : node.trim(), type.precision, type.scale);
      }
      break;
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      if (typeof node === 'string') {
        const wall = parseWallClock(type.kind === 'TIMESTAMP_LTZ' ? node.replace(/Z$/, '') : node);
        if (wall !== undefined) return wall;
      }
      break;
    case 'DATE': {
      // ISO_LOCAL_DATE, as Flink's json format reads a DATE: two-digit months and days.
      const days = typeof node === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(node) ? parseDate(node) : undefined;
      if (days !== undefined) return days;
      break;
    }
    default:
  }
  throw new Error(`${JSON.stringify(node)} is not a ${typeName(type)}`);
}

/** Reads a JSON object's fields by name into the physical columns' values, as Flink's json format does. */
export function jsonRowReader(fields: readonly Field[], options: JsonFormatOptions): (text: string) => SqlValue[] {
  return (text) => {
    const document = JSON.parse(text) as unknown;
    if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new Error(`the value is not a JSON object: ${text.slice(0, 200)}`);
    return fields.map((field) => {
      const node = (document as Record<string, unknown>)[field.name];
      if (node === undefined && options.failOnMissingField) throw new Error(`the field "${field.name}" is missing (json.fail-on-missing-field is true)`);
      try {
        return fieldValue(node, field.type);
      } catch (error) {
        throw new Error(`the field "${field.name}": ${(error as Error).message}`, { cause: error });
      }
    });
  };
}

function fieldText(value: SqlValue, type: SqlType, options: JsonFormatOptions): string {
  if (value === null) return 'null';
  switch (type.kind) {
    case 'DECIMAL':
      return String(value);
    case 'DOUBLE':
      return Number.isFinite(value) ? doubleText(value as number) : JSON.stringify(String(value));
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      // Flink's json format writes a fraction's digits up to its last nonzero one: 10:00:00.15, 10:00:00.
      const text = formatWallClock(value as number, type.precision).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
      const standard = options.timestampStandard === 'ISO-8601' ? text.replace(' ', 'T') : text;
      return JSON.stringify(type.kind === 'TIMESTAMP_LTZ' ? `${standard}Z` : standard);
    }
    case 'DATE':
      return JSON.stringify(formatDate(value as number));
    default:
      return JSON.stringify(value);
  }
}

/** Writes the physical columns' values as a JSON object, in column order, as Flink's json format does. */
export function jsonRowWriter(fields: readonly Field[], options: JsonFormatOptions): (values: readonly SqlValue[]) => string {
  const names = fields.map((field) => `${JSON.stringify(field.name)}:`);
  return (values) => `{${fields.map((field, i) => `${names[i] as string}${fieldText(values[i] ?? null, field.type, options)}`).join(',')}}`;
}
