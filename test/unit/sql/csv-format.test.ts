// Sluice's csv format against Flink 2.2's, case by case: test/formats/csv-on-flink/cases.txt, which
// `npm run conformance:csv` ran through Flink's csv format into expected-by-flink.txt.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Field } from '../../../lib/sql/compiled.js';
import { csvRowReader, csvRowWriter, type CsvFormatOptions } from '../../../lib/sql/csv-format.js';
import { formatWallClock } from '../../../lib/sql/time.js';
import { BIGINT, BOOLEAN, decimal, DOUBLE, INT, STRING, timestamp, type SqlValue } from '../../../lib/sql/types.js';
import { doubleText } from '../../../lib/sql/values.js';

const DIRECTORY = join(import.meta.dirname, '../../formats/csv-on-flink');

const FIELDS: Field[] = [
  { name: 's', type: STRING },
  { name: 'i', type: INT },
  { name: 'b', type: BIGINT },
  { name: 'd', type: DOUBLE },
  { name: 'm', type: decimal(10, 2) },
  { name: 'f', type: BOOLEAN },
  { name: 't', type: timestamp('TIMESTAMP', 3) },
  { name: 'z', type: timestamp('TIMESTAMP_LTZ', 3) },
];

/** Where Sluice differs from Flink, on purpose: each case's line, and why. */
const KNOWN_DIFFERENCES = new Map([
  [
    'read a,1,2,3,4,true,2026-12-07 10:00:00.123456789,2026-12-07 10:00:00Z',
    "Sluice's timestamps hold milliseconds: a finer fraction than the column's precision is dropped, where Flink keeps it and writes it back",
  ],
]);

const unescape = (text: string) => text.replaceAll('\\n', '\n').replaceAll('\\r', '\r').replaceAll('\\t', '\t').replaceAll('\\s', ' ');
const escape = (text: string) => text.replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t');

function valueText(value: SqlValue, field: Field): string {
  if (value === null) return 'NULL';
  switch (field.type.kind) {
    case 'STRING':
      return `'${escape(value as string)}'`;
    case 'DOUBLE':
      return doubleText(value as number);
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return formatWallClock(value as number, 3);
    default:
      return String(value);
  }
}

function optionsOf(line: string): CsvFormatOptions {
  const given = new Map(
    line
      .slice('options'.length)
      .trim()
      .split(/ +/)
      .filter((option) => option !== '')
      .map((option) => {
        const [key = '', value = ''] = option.split(/=(.*)/s);
        return [key, unescape(value)];
      }),
  );
  return {
    fieldDelimiter: given.get('field-delimiter') ?? ',',
    quoteCharacter: given.get('disable-quote-character') === 'true' ? undefined : (given.get('quote-character') ?? '"'),
    allowComments: given.get('allow-comments') === 'true',
    ignoreParseErrors: given.get('ignore-parse-errors') === 'true',
    escapeCharacter: given.get('escape-character'),
    nullLiteral: given.get('null-literal'),
    writeBigDecimalInScientificNotation: given.get('write-bigdecimal-in-scientific-notation') !== 'false',
  };
}

/** Each case's line as CsvOnFlink.java prints Flink's: what it read and what it writes back. */
function sluiceLines(): string[] {
  const lines: string[] = [];
  let options = optionsOf('options');
  for (const line of readFileSync(join(DIRECTORY, 'cases.txt'), 'utf8').split('\n')) {
    if (line.startsWith('options')) options = optionsOf(line);
    if (!line.startsWith('read ')) continue;
    try {
      const row = csvRowReader(FIELDS, options)(unescape(line.slice('read '.length)));
      if (row === null) lines.push(`${line} => skipped`);
      else lines.push(`${line} => ${row.map((value, i) => valueText(value, FIELDS[i] as Field)).join(' | ')} => ${escape(csvRowWriter(FIELDS, options)(row))}`);
    } catch {
      lines.push(`${line} => error`);
    }
  }
  return lines;
}

describe('the csv format', () => {
  it("reads and writes each case as Flink 2.2's csv format does, but for the differences listed", () => {
    const flink = readFileSync(join(DIRECTORY, 'expected-by-flink.txt'), 'utf8').trimEnd().split('\n');
    const sluice = sluiceLines();
    expect(sluice.map((line) => line.split(' => ')[0])).toEqual(flink.map((line) => line.split(' => ')[0]));
    const differing = sluice.filter((line, i) => line !== flink[i]).map((line) => line.split(' => ')[0]);
    expect(differing).toEqual([...KNOWN_DIFFERENCES.keys()]);
    // The cases cover quoting, escapes, NULL literals, skipped records and every column type.
    expect(flink.length).toBeGreaterThan(100);
  });

  it("writes a DECIMAL as Java's BigDecimal.toString does, scientific below an adjusted exponent of -6, or plain", () => {
    const small = [{ name: 'm', type: decimal(12, 9) }];
    const scientific = csvRowWriter(small, optionsOf('options'));
    expect(['0.000000010', '0.000000000', '-0.000000120', '0.000001230', '123.000000000'].map((m) => scientific([m]))).toEqual(['1.0E-8', '0E-9', '-1.20E-7', '0.000001230', '123.000000000']);
    expect(csvRowWriter(small, optionsOf('options write-bigdecimal-in-scientific-notation=false'))(['0.000000010'])).toBe('0.000000010');
  });

  it('names the field and the value that does not fit its column', () => {
    const read = csvRowReader(FIELDS, optionsOf('options'));
    expect(() => read('a,x,2,3,4,true,2026-12-07 10:00:00,2026-12-07 10:00:00Z')).toThrow('the field i: "x" is not a INT');
    expect(() => read('a,1,2')).toThrow('the record has 3 fields where the table has 8 columns');
    expect(() => read('"a,1')).toThrow('a quoted field has no closing quote');
  });
});
