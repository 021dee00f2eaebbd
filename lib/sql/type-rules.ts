import type { SqlPosition } from './errors.js';
import { sqlError, type Scope } from './compiled.js';
import { asDecimal, commonNumeric, decimal, isNumeric, isTemporal, NULL_TYPE, timestamp, typeName, type SqlType } from './types.js';

/** The type two operands are compared or combined in, or an error naming both. */
export function commonType(types: readonly SqlType[], scope: Scope, position: SqlPosition, what: string): SqlType {
  const known = types.filter((t) => t.kind !== 'NULL');
  const [first] = known;
  if (!first) return NULL_TYPE;
  const nullable = types.some((t) => t.nullable);
  if (known.every(isNumeric)) {
    const kind = known.map((t) => t.kind).reduce((a, b) => commonNumeric({ kind: a, nullable } as SqlType, { kind: b, nullable } as SqlType));
    if (kind !== 'DECIMAL') return { kind, nullable } as SqlType;
    const scale = Math.max(...known.map((t) => asDecimal(t).scale));
    const whole = Math.max(...known.map((t) => asDecimal(t).precision - asDecimal(t).scale));
    return decimal(whole + scale, scale, nullable);
  }
  if (known.every((t) => t.kind === first.kind)) {
    const precision = Math.max(...known.map((t) => ('precision' in t ? t.precision : 0)));
    return isTemporal(first) ? timestamp(first.kind, precision, nullable) : { ...first, nullable };
  }
  throw sqlError(scope, `${what} has operands of types ${known.map(typeName).join(' and ')}, which Flink does not mix: CAST one of them`, position);
}

