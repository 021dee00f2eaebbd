import { toDecimal } from './decimal.js';
import type { Field } from './compiled.js';
import { formatDate, formatWallClock, parseDate } from './time.js';
import { integerRange, typeName, type SqlType, type SqlValue } from './types.js';
import { doubleText } from './values.js';

/**
 * Flink's `csv` format (flink-csv, over Jackson's CSV parser and generator): one record's value
 * is one row, its fields in column order. test/formats/csv-on-flink holds it to Flink 2.2's
 * reading and writing of each case there.
 */
export interface CsvFormatOptions {
  /** csv.field-delimiter: one character, ',' by default. */
  readonly fieldDelimiter: string;
  /** csv.quote-character ('"' by default); undefined under csv.disable-quote-character. */
  readonly quoteCharacter: string | undefined;
  /** csv.allow-comments: a line starting with '#' is skipped. */
  readonly allowComments: boolean;
  /** csv.ignore-parse-errors: a field that does not fit its column reads as NULL, and a record that is not CSV is skipped. */
  readonly ignoreParseErrors: boolean;
  /** csv.escape-character: none by default. */
  readonly escapeCharacter: string | undefined;
  /** csv.null-literal: the text that reads as NULL, and that NULL is written as (an empty field without it). */
  readonly nullLiteral: string | undefined;
  /** csv.write-bigdecimal-in-scientific-notation: DECIMAL written as Java's BigDecimal.toString (true, the default) or toPlainString. */
  readonly writeBigDecimalInScientificNotation: boolean;
}

/** A record that is not CSV the table can read: skipped under csv.ignore-parse-errors, where a field that does not fit reads as NULL. */
class CsvRecordError extends Error {}

/** Java's String.trim: every character up to U+0020 at either end. */
function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

const INTEGER = /^[+-]?\d+$/;
/** What Java's Double.parseDouble reads, hexadecimal floats aside. */
const DOUBLE = /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

function integerValue(text: string, min: bigint, max: bigint): number | undefined {
  const trimmed = javaTrim(text);
  if (!INTEGER.test(trimmed)) return undefined;
  const value = BigInt(trimmed);
  return value < min || value > max ? undefined : Number(value);
}

/**
 * `yyyy-MM-dd HH:mm:ss[.fraction]` as Java's Timestamp.valueOf reads it: a day past its month's
 * end is the month's last, and 24:00:00 the next day's start. Fractions past the millisecond are dropped.
 */
function timestampValue(text: string): number | undefined {
  const match = TIMESTAMP.exec(javaTrim(text));
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 59) return undefined;
  if (hour === 24 && (minute > 0 || second > 0 || Number(match[7] ?? 0) > 0)) return undefined;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const millis = Number((match[7] ?? '0').padEnd(3, '0').slice(0, 3));
  return Date.UTC(year, month - 1, Math.min(day, lastDay), hour, minute, second, millis);
}

/** One field's text as its column's value, as Flink's csv format converts it; throws a message when it does not fit. */
function fieldValue(text: string, type: SqlType): SqlValue {
  let value: SqlValue | undefined;
  switch (type.kind) {
    case 'STRING':
      return text;
    case 'BOOLEAN':
      return javaTrim(text).toLowerCase() === 'true';
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'BIGINT': {
      const [min, max] = type.kind === 'BIGINT' ? [-(2n ** 63n), 2n ** 63n - 1n] : integerRange(type.kind).map(BigInt);
      value = integerValue(text, min as bigint, max as bigint);
      break;
    }
    case 'DOUBLE': {
      const trimmed = javaTrim(text);
      if (DOUBLE.test(trimmed)) value = Number(trimmed.replace(/[fFdD]$/, ''));
      break;
    }
    case 'DECIMAL':
      // Java's BigDecimal(String), which does not trim; a value past the precision is NULL, as Flink's DecimalData gives.
      if (DECIMAL.test(text)) return toDecimal(text, type.precision, type.scale);
      break;
    case 'TIMESTAMP':
      value = timestampValue(text);
      break;
    case 'TIMESTAMP_LTZ':
      if (text.endsWith('Z')) value = timestampValue(text.slice(0, -1));
      break;
    case 'DATE':
      // Java's Date.valueOf, as Flink's csv format reads a DATE: yyyy-[m]m-[d]d, untrimmed.
      if (text === text.trim()) value = parseDate(text);
      break;
    default:
  }
  if (value === undefined) throw new Error(`${JSON.stringify(text)} is not a ${typeName(type)}`);
  return value;
}

/** The fields of the value's first record (Flink reads no more), as Jackson's CSV parser splits them. */
function recordFields(text: string, options: CsvFormatOptions): string[] {
  const { fieldDelimiter: delimiter, quoteCharacter: quote, escapeCharacter: escape } = options;
  let at = 0;
  // Comment lines are skipped; what follows them is the record.
  while (options.allowComments && text[at] === '#') {
    const end = text.indexOf('\n', at);
    at = end < 0 ? text.length : end + 1;
  }
  if (at >= text.length) throw new CsvRecordError('the value holds no record');
  const atLineEnd = () => at >= text.length || text[at] === '\n' || text[at] === '\r';
  const fields: string[] = [];
  for (;;) {
    let field = '';
    if (quote !== undefined && text[at] === quote) {
      for (at++; ; ) {
        if (at >= text.length) throw new CsvRecordError('a quoted field has no closing quote');
        const char = text[at] as string;
        if (escape !== undefined && char === escape && at + 1 < text.length) {
          field += text.charAt(at + 1);
          at += 2;
        } else if (char === quote && text[at + 1] === quote) {
          field += quote;
          at += 2;
        } else if (char === quote) {
          at++;
          break;
        } else {
          field += char;
          at++;
        }
      }
      // Spaces may follow the closing quote; anything else may not.
      while (text[at] === ' ') at++;
      if (!atLineEnd() && text[at] !== delimiter) throw new CsvRecordError(`a quoted field is followed by ${JSON.stringify(text[at])} instead of ${JSON.stringify(delimiter)}`);
    } else {
      while (!atLineEnd() && text[at] !== delimiter) {
        if (escape !== undefined && text[at] === escape && at + 1 < text.length) at++;
        field += text.charAt(at);
        at++;
      }
    }
    fields.push(field);
    if (atLineEnd()) return fields;
    at++;
  }
}

/** Reads a record's value as the row of `fields`; null for a record skipped under csv.ignore-parse-errors. */
export function csvRowReader(fields: readonly Field[], options: CsvFormatOptions): (text: string) => SqlValue[] | null {
  return (text) => {
    let values: string[];
    try {
      values = recordFields(text, options);
      // One empty field past the last column is a trailing delimiter, which Jackson allows.
      if (values.length === fields.length + 1 && values.at(-1) === '') values.pop();
      if (values.length > fields.length) throw new CsvRecordError(`the record has ${values.length} fields, more than the table's ${fields.length} columns`);
    } catch (error) {
      if (options.ignoreParseErrors && error instanceof CsvRecordError) return null;
      throw error;
    }
    if (values.length < fields.length && !options.ignoreParseErrors) {
      throw new Error(`the record has ${values.length} fields where the table has ${fields.length} columns`);
    }
    return fields.map((field, i) => {
      const text = values[i];
      if (text === undefined || text === options.nullLiteral) return null;
      try {
        return fieldValue(text, field.type);
      } catch (error) {
        if (options.ignoreParseErrors) return null;
        throw new Error(`the field ${field.name}: ${(error as Error).message}`, { cause: error });
      }
    });
  };
}

/** Java's BigDecimal.toString of decimal text: scientific notation when its adjusted exponent is below -6. */
function scientificDecimal(text: string): string {
  const negative = text.startsWith('-');
  const [whole = '', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const unscaled = `${whole}${fraction}`.replace(/^0+(?=.)/, '');
  const adjusted = unscaled.length - fraction.length - 1;
  if (fraction.length === 0 || adjusted >= -6) return text;
  const mantissa = unscaled.length > 1 ? `${unscaled[0] as string}.${unscaled.slice(1)}` : unscaled;
  return `${negative ? '-' : ''}${mantissa}E${adjusted}`;
}

/** Writes a row of `fields` as one CSV record, as Flink's csv format writes it (Jackson's loose quoting). */
export function csvRowWriter(fields: readonly Field[], options: CsvFormatOptions): (values: readonly SqlValue[]) => string {
  const { fieldDelimiter: delimiter, quoteCharacter: quote, escapeCharacter: escape } = options;
  // Jackson quotes a text that might need it: one with a character below every special one (the
  // delimiter, the quote and the line feed), with the escape character, or longer than 24.
  const safeFrom = Math.max(delimiter.charCodeAt(0), quote === undefined ? -1 : quote.charCodeAt(0), 0x0a) + 1;
  const doubled = new RegExp(`[${[quote, escape].filter((c) => c !== undefined).map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`, 'g');
  const textField = (text: string): string => {
    if (quote === undefined) return text;
    let quoted = text.length > 24;
    for (let i = 0; !quoted && i < text.length; i++) quoted = text.charCodeAt(i) < safeFrom || text[i] === escape;
    return quoted ? `${quote}${text.replace(doubled, '$&$&')}${quote}` : text;
  };
  const fieldText = (value: SqlValue, type: SqlType): string => {
    if (value === null) return options.nullLiteral ?? '';
    switch (type.kind) {
      case 'DOUBLE':
        return doubleText(value as number);
      case 'DECIMAL':
        return options.writeBigDecimalInScientificNotation ? scientificDecimal(value as string) : (value as string);
      case 'TIMESTAMP':
      case 'TIMESTAMP_LTZ': {
        // Java's Timestamp.toString, without a fraction of zero and to its last nonzero digit.
        const text = formatWallClock(value as number, 3).replace(/\.?0+$/, '');
        return textField(type.kind === 'TIMESTAMP_LTZ' ? `${text}Z` : text);
      }
      case 'STRING':
        return textField(value as string);
      case 'DATE':
        return formatDate(value as number);
      default:
        return String(value);
    }
  };
  return (values) => fields.map((field, i) => fieldText(values[i] ?? null, field.type)).join(delimiter);
}
