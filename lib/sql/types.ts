/**
 * Flink SQL's data types that Sluice runs. Values at run time: STRING as a string, BOOLEAN as a
 * boolean, INT, BIGINT and DOUBLE as numbers, DECIMAL as its exact decimal text (state and
 * repartition records are JSON, which a bigint is not), TIMESTAMP and TIMESTAMP_LTZ as epoch
 * milliseconds (a TIMESTAMP's as if its wall-clock time were UTC), and NULL as null.
 */
export type SqlType =
  | { readonly kind: 'STRING' | 'BOOLEAN' | 'INT' | 'BIGINT' | 'DOUBLE' | 'NULL'; readonly nullable: boolean }
  | { readonly kind: 'DECIMAL'; readonly precision: number; readonly scale: number; readonly nullable: boolean }
  | { readonly kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ'; readonly precision: number; readonly nullable: boolean; readonly rowtime?: boolean };

export type SqlValue = string | number | boolean | null;

export const STRING: SqlType = { kind: 'STRING', nullable: true };
export const BOOLEAN: SqlType = { kind: 'BOOLEAN', nullable: true };
export const INT: SqlType = { kind: 'INT', nullable: true };
export const BIGINT: SqlType = { kind: 'BIGINT', nullable: true };
export const DOUBLE: SqlType = { kind: 'DOUBLE', nullable: true };
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
  return type.kind === 'INT' || type.kind === 'BIGINT' || type.kind === 'DOUBLE' || type.kind === 'DECIMAL';
}

export function isTemporal(type: SqlType): type is Extract<SqlType, { kind: 'TIMESTAMP' | 'TIMESTAMP_LTZ' }> {
  return type.kind === 'TIMESTAMP' || type.kind === 'TIMESTAMP_LTZ';
}

/** The exact-number precision of an integer type, as Flink widens it to a DECIMAL. */
function integerDigits(type: SqlType): number {
  return type.kind === 'INT' ? 10 : 19;
}

/** The DECIMAL an exact numeric operand counts as: INT as DECIMAL(10, 0), BIGINT as DECIMAL(19, 0). */
export function asDecimal(type: SqlType): { precision: number; scale: number } {
  return type.kind === 'DECIMAL' ? { precision: type.precision, scale: type.scale } : { precision: integerDigits(type), scale: 0 };
}

/** The type two numeric operands are combined in, by Flink's widening: DOUBLE over DECIMAL over BIGINT over INT. */
export function commonNumeric(a: SqlType, b: SqlType): SqlType['kind'] {
  if (a.kind === 'DOUBLE' || b.kind === 'DOUBLE') return 'DOUBLE';
  if (a.kind === 'DECIMAL' || b.kind === 'DECIMAL') return 'DECIMAL';
  if (a.kind === 'BIGINT' || b.kind === 'BIGINT') return 'BIGINT';
  return 'INT';
}
