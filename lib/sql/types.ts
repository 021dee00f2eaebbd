/**
 * Flink SQL's data types that Sluice runs. Values at run time: STRING as a string, BOOLEAN as a
 * boolean, TINYINT, SMALLINT, INT, BIGINT and DOUBLE as numbers, DECIMAL as its exact decimal text (state and
 * repartition records are JSON, which a bigint is not), TIMESTAMP and TIMESTAMP_LTZ as epoch
 * milliseconds (a TIMESTAMP's as if its wall-clock time were UTC), DATE as days since 1970-01-01,
 * and NULL as null.
 */
export type SqlType =
  | { readonly kind: 'STRING' | 'BOOLEAN' | IntegerKind | 'DOUBLE' | 'DATE' | 'NULL'; readonly nullable: boolean }
  | { readonly kind: 'DECIMAL'; readonly precision: number; readonly scale: number; readonly nullable: boolean }
  | { readonly kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ'; readonly precision: number; readonly nullable: boolean; readonly rowtime?: boolean };

export type SqlValue = string | number | boolean | null;

export type IntegerKind = 'TINYINT' | 'SMALLINT' | 'INT' | 'BIGINT';

/** The numeric kinds from narrowest to widest, as Flink widens them. */
const NUMERIC_ORDER: readonly SqlType['kind'][] = ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DECIMAL', 'DOUBLE'];

/** Digits of each integer kind's largest value, which its DECIMAL counterpart holds. */
const INTEGER_DIGITS: Readonly<Record<IntegerKind, number>> = { TINYINT: 3, SMALLINT: 5, INT: 10, BIGINT: 19 };

export function isInteger(type: SqlType): type is { kind: IntegerKind; nullable: boolean } {
  return type.kind in INTEGER_DIGITS;
}

/**
 * A whole number narrowed to an integer kind as Java narrows it, keeping the low bits, as
 * Flink's arithmetic on TINYINT, SMALLINT and INT overflows. A BIGINT is kept as it is.
 */
export function wrapInteger(kind: SqlType['kind']): (n: number) => number {
  switch (kind) {
    case 'TINYINT':
      return (n) => (n << 24) >> 24;
    case 'SMALLINT':
      return (n) => (n << 16) >> 16;
    case 'INT':
      return (n) => n | 0;
    default:
      return (n) => n;
  }
}

/** The smallest and largest values of an integer kind narrower than BIGINT. */
export function integerRange(kind: Exclude<IntegerKind, 'BIGINT'>): readonly [number, number] {
  const half = 2 ** ({ TINYINT: 8, SMALLINT: 16, INT: 32 }[kind] - 1);
  return [-half, half - 1];
}

export const STRING: SqlType = { kind: 'STRING', nullable: true };
export const BOOLEAN: SqlType = { kind: 'BOOLEAN', nullable: true };
export const TINYINT: SqlType = { kind: 'TINYINT', nullable: true };
export const SMALLINT: SqlType = { kind: 'SMALLINT', nullable: true };
export const INT: SqlType = { kind: 'INT', nullable: true };
export const BIGINT: SqlType = { kind: 'BIGINT', nullable: true };
export const DOUBLE: SqlType = { kind: 'DOUBLE', nullable: true };
export const DATE: SqlType = { kind: 'DATE', nullable: true };
export const NULL_TYPE: SqlType = { kind: 'NULL', nullable: true };

export function decimal(precision: number, scale: number, nullable = true): SqlType {
  return { kind: 'DECIMAL', precision: Math.min(38, precision), scale, nullable };
}

export function timestamp(kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ', precision = 3, nullable = true): SqlType {
  return { kind, precision, nullable };
}

/** The type as Flink prints it, e.g. `DECIMAL(10, 2) NOT NULL` or `TIMESTAMP_LTZ(3) *ROWTIME*`. */
export function typeName(type: SqlType): string {
  const base =
    type.kind === 'DECIMAL'
      ? `DECIMAL(${type.precision}, ${type.scale})`
      : type.kind === 'TIMESTAMP' || type.kind === 'TIMESTAMP_LTZ'
        ? `${type.kind}(${type.precision})${type.rowtime ? ' *ROWTIME*' : ''}`
        : type.kind;
  return type.nullable ? base : `${base} NOT NULL`;
}

/** The type without its time attribute: what a join, an update or an expression leaves of a rowtime column. */
export function plainTime(type: SqlType): SqlType {
  return isTemporal(type) && type.rowtime ? { ...type, rowtime: false } : type;
}

export function withNullable<T extends SqlType>(type: T, nullable: boolean): T {
  return { ...type, nullable };
}

export function isNumeric(type: SqlType): boolean {
  return NUMERIC_ORDER.includes(type.kind);
}

export function isTemporal(type: SqlType): type is Extract<SqlType, { kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ' }> {
  return type.kind === 'TIMESTAMP' || type.kind === 'TIMESTAMP_LTZ';
}

/** A timestamp or a DATE: what intervals move, and Flink casts to no number. */
export function isDateTime(type: SqlType): type is Extract<SqlType, { kind: 'DATE' | 'TIMESTAMP' | 'TIMESTAMP_LTZ' }> {
  return type.kind === 'DATE' || isTemporal(type);
}

/** The DECIMAL an exact numeric operand counts as: TINYINT as DECIMAL(3, 0), INT as DECIMAL(10, 0), BIGINT as DECIMAL(19, 0). */
export function asDecimal(type: SqlType): { precision: number; scale: number } {
  return type.kind === 'DECIMAL' ? { precision: type.precision, scale: type.scale } : { precision: isInteger(type) ? INTEGER_DIGITS[type.kind] : 19, scale: 0 };
}

/** The type two numeric operands are combined in, by Flink's widening: DOUBLE over DECIMAL over BIGINT over INT over SMALLINT over TINYINT. */
export function commonNumeric(a: SqlType, b: SqlType): SqlType['kind'] {
  return NUMERIC_ORDER[Math.max(NUMERIC_ORDER.indexOf(a.kind), NUMERIC_ORDER.indexOf(b.kind))] as SqlType['kind'];
}

/** Whether a numeric kind widens to another (or is it), as an INSERT INTO's column may be widened to its sink's. */
export function widensTo(from: SqlType['kind'], to: SqlType['kind']): boolean {
  const index = NUMERIC_ORDER.indexOf(from);
  return index >= 0 && index <= NUMERIC_ORDER.indexOf(to);
}
