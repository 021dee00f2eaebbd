import { toDecimal } from './decimal.js';
import { SqlError } from './errors.js';
import type { Compiled, Row, UserFunction } from './compiled.js';
import type { CallContext } from './functions.js';
import { commonType } from './type-rules.js';
import { integerRange, isNumeric, typeName, type SqlType, type SqlValue } from './types.js';
import { widen } from './values.js';

/**
 * A user-defined scalar function, as Flink's ScalarFunction: SQL calls `eval` once per row with
 * its arguments' values. Types are written as a column's type is (`'STRING'`, `'BIGINT'`,
 * `'DECIMAL(10, 2)'`, `'TIMESTAMP(3)'`); values arrive and return as Sluice SQL holds them:
 * STRING a string, BOOLEAN a boolean, INT, BIGINT and DOUBLE a number, DECIMAL its text (a
 * number is taken too), TIMESTAMP and TIMESTAMP_LTZ epoch milliseconds, DATE days since
 * 1970-01-01, NULL as null.
 */
export interface ScalarFunction {
  readonly argumentTypes: readonly string[];
  readonly resultType: string;
  readonly eval: (...args: SqlValue[]) => SqlValue | undefined;
}

/** Checks a function as createTemporarySystemFunction registers it; `typeOf` reads a written type. */
export function userFunction(name: string, definition: ScalarFunction, typeOf: (text: string) => SqlType): UserFunction {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`createTemporarySystemFunction('${name}', …): a function's name is a SQL identifier (letters, digits and _)`);
  if (typeof definition.eval !== 'function') throw new Error(`createTemporarySystemFunction('${name}', …): eval must be a function`);
  const resolve = (text: string, what: string) => {
    try {
      return typeOf(text);
    } catch {
      throw new Error(`createTemporarySystemFunction('${name}', …): ${what} '${text}' is not a type Sluice SQL has (docs/sql.md, "Data types")`);
    }
  };
  return {
    name,
    argumentTypes: definition.argumentTypes.map((text, i) => resolve(text, `argument ${i + 1}'s type`)),
    resultType: resolve(definition.resultType, 'the result type'),
    eval: definition.eval,
  };
}

/** Compiles a call of a user-defined function: its arguments widened to the declared types, its result checked against its type. */
export function callUserFunction(fn: UserFunction, args: readonly Compiled[], { scope, position }: CallContext): Compiled {
  const signature = `${fn.name}(${fn.argumentTypes.map(typeName).join(', ')})`;
  const mismatch = () =>
    new SqlError(`${fn.name}(${args.map((a) => typeName(a.type)).join(', ')}) does not match ${signature}: CAST the arguments to its types`, position, scope.text);
  if (args.length !== fn.argumentTypes.length) throw mismatch();
  const evaluators = args.map((arg, i) => {
    const declared = fn.argumentTypes[i] as SqlType;
    if (arg.type.kind === 'NULL') throw new SqlError("illegal use of 'NULL' as an argument, as in Flink: give it a type, CAST(NULL AS STRING)", position, scope.text);
    if (arg.type.kind === declared.kind && arg.type.kind !== 'DECIMAL') return arg.evaluate;
    const widens = arg.type.kind === declared.kind || (isNumeric(arg.type) && isNumeric(declared) && commonType([arg.type, declared], scope, position, fn.name).kind === declared.kind);
    if (!widens) throw mismatch();
    return (row: Row) => widen(arg.evaluate(row), arg.type, declared);
  });
  const { resultType } = fn;
  return {
    type: { ...resultType, nullable: true },
    evaluate: (row) => {
      const values = evaluators.map((evaluate) => evaluate(row));
      let result: SqlValue | undefined;
      try {
        result = fn.eval(...values);
      } catch (error) {
        throw new Error(`${fn.name}(${values.map((v) => JSON.stringify(v)).join(', ')}) threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      return checkedResult(fn, result);
    },
  };
}

/** The value a function returned, as its result type holds it; an error naming the function if it is not one. */
function checkedResult(fn: UserFunction, value: SqlValue | undefined): SqlValue {
  if (value === null || value === undefined) return null;
  const type = fn.resultType;
  const fits = (() => {
    switch (type.kind) {
      case 'STRING':
        return typeof value === 'string';
      case 'BOOLEAN':
        return typeof value === 'boolean';
      case 'TINYINT':
      case 'SMALLINT':
      case 'INT': {
        const [min, max] = integerRange(type.kind);
        return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
      }
      case 'BIGINT':
        return Number.isSafeInteger(value);
      case 'DOUBLE':
        return typeof value === 'number';
      case 'TIMESTAMP':
      case 'TIMESTAMP_LTZ':
      case 'DATE':
        return Number.isSafeInteger(value);
      default:
        return type.kind === 'DECIMAL' && (typeof value === 'number' || typeof value === 'string');
    }
  })();
  const decimal = fits && type.kind === 'DECIMAL' ? decimalOrNull(value as number | string, type.precision, type.scale) : value;
  if (!fits || decimal === null) throw new Error(`${fn.name} returned ${JSON.stringify(value)}, which is not a ${typeName(type)}: return one, or declare the resultType it returns`);
  return decimal;
}

function decimalOrNull(value: number | string, precision: number, scale: number): string | null {
  try {
    return toDecimal(value, precision, scale);
  } catch {
    return null;
  }
}
