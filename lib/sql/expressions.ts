import type { Expression, TypeName } from './ast.js';
import { decimalAdd, decimalDivide, decimalMultiply, decimalNegate, decimalSubtract, toDecimal } from './decimal.js';
import { SqlUnsupportedError, type SqlPosition } from './errors.js';
import { castTo, resolveType } from './casts.js';
import { sqlError, type Compiled, type Field, type Row, type Scope, type WindowColumn } from './compiled.js';
import { commonType } from './type-rules.js';
import { scalarFunction } from './functions.js';
import { callUserFunction } from './user-functions.js';
import { byMillis, byMonths, parseDate, parseWallClock } from './time.js';
import {
  asDecimal,
  BIGINT,
  BOOLEAN,
  DATE,
  commonNumeric,
  decimal,
  DOUBLE,
  INT,
  isDateTime,
  isNumeric,
  NULL_TYPE,
  plainTime,
  STRING,
  timestamp,
  typeName,
  wrapInteger,
  type SqlType,
  type SqlValue,
} from './types.js';
import { compareValues, widen } from './values.js';

export const AGGREGATE_FUNCTIONS = new Set(['COUNT', 'SUM', 'MIN', 'MAX', 'AVG']);

/** The expression as text without positions: how GROUP BY keys and aggregates are recognised in SELECT and HAVING. */
export function canonical(expression: Expression): string {
  return JSON.stringify(expression, (key, value: unknown) => (key === 'position' ? undefined : key === 'name' && typeof value === 'string' ? value.toLowerCase() : value));
}

/** The expressions directly inside an expression. */
export function subexpressions(expression: Expression): (Expression | undefined)[] {
  switch (expression.kind) {
    case 'unary':
    case 'isNull':
    case 'cast':
      return [expression.operand];
    case 'binary':
      return [expression.left, expression.right];
    case 'between':
      return [expression.operand, expression.low, expression.high];
    case 'in':
      return [expression.operand, ...expression.list];
    case 'like':
      return [expression.operand, expression.pattern];
    case 'case':
      return [expression.operand, ...expression.branches.flatMap((b) => [b.when, b.then]), expression.otherwise];
    case 'call':
      return [...expression.args, expression.filter];
    default:
      return [];
  }
}

export { conjunction, conjuncts } from './ast.js';

/** Finds the column an unqualified or qualified name refers to, or fails naming what there is. */
export function resolveField(scope: Scope, name: string, qualifier: string | undefined, position: SqlPosition): number {
  const lower = name.toLowerCase();
  const matches = scope.fields.flatMap((field, index) =>
    field.name.toLowerCase() === lower && (qualifier === undefined ? !field.qualifiedOnly : field.qualifier?.toLowerCase() === qualifier.toLowerCase()) ? [index] : [],
  );
  const [index] = matches;
  if (index === undefined) {
    const known = scope.fields.map((f) => f.name).join(', ');
    throw sqlError(scope, `column '${qualifier ? `${qualifier}.` : ''}${name}' not found in any table; the columns are ${known}`, position);
  }
  if (matches.length > 1) throw sqlError(scope, `column '${name}' is ambiguous: qualify it with its table`, position);
  return index;
}

/** The column an expression names, when it holds a bound of its rows' windows. */
export function windowColumnOf(expression: Expression, scope: Scope): WindowColumn | undefined {
  if (expression.kind !== 'column') return undefined;
  const index = resolveField(scope, expression.name, expression.table, expression.position);
  const window = scope.fields[index]?.window;
  return window && { index, window };
}

/** Compiles an expression to its type and a function of the row, applying Flink's type and NULL rules. */
export function compileExpression(expression: Expression, scope: Scope): Compiled {
  // A grouped column is the same column qualified or not: GROUP BY B.bidder groups bidder.
  const computed = scope.computed?.get(canonical(expression.kind === 'column' ? { ...expression, table: undefined } : expression));
  if (computed !== undefined) {
    const type = scope.fields[computed]?.type ?? NULL_TYPE;
    return { type, evaluate: (row) => row[computed] ?? null };
  }
  switch (expression.kind) {
    case 'literal':
      return literal(expression.value, expression.text);
    case 'typedLiteral':
      return typedLiteral(expression, scope);
    case 'interval':
    case 'monthInterval':
      throw sqlError(scope, 'an INTERVAL stands only beside a timestamp or a date, as in ts - INTERVAL \'5\' SECOND', expression.position);
    case 'column': {
      if (scope.computed) throw sqlError(scope, `expression '${expression.name}' is not being grouped: add it to GROUP BY or aggregate it`, expression.position);
      const index = resolveField(scope, expression.name, expression.table, expression.position);
      return { type: (scope.fields[index] as Field).type, evaluate: (row) => row[index] ?? null };
    }
    case 'star':
      throw sqlError(scope, '* stands only in a SELECT list or in COUNT(*)', expression.position);
    case 'unary':
      return expression.operator === 'NOT' ? not(compileBoolean(expression.operand, scope, 'NOT')) : negate(compileExpression(expression.operand, scope), scope, expression.position);
    case 'binary':
      return binary(expression, scope);
    case 'isNull': {
      const operand = compileExpression(expression.operand, scope);
      const negated = expression.negated;
      return { type: { ...BOOLEAN, nullable: false }, evaluate: (row) => (operand.evaluate(row) === null) !== negated };
    }
    case 'between':
      return between(expression, scope);
    case 'in':
      if (expression.query) throw new SqlUnsupportedError('IN (subquery) other than a condition of WHERE, ANDed with the others', expression.position, scope.text);
      return inList(expression, scope);
    case 'like':
      return like(expression, scope);
    case 'cast':
      return cast(compileExpression(expression.operand, scope), expression.type, expression.safe, scope);
    case 'case':
      return caseWhen(expression, scope);
    case 'call':
      if (expression.over && scope.overResults?.has(canonical(expression))) {
        const index = scope.overResults.get(canonical(expression)) as number;
        return { type: (scope.fields[index] as Field).type, evaluate: (row) => row[index] ?? null };
      }
      if (expression.over) {
        const feature = expression.name === 'ROW_NUMBER' ? 'ROW_NUMBER() other than in a Top-N (a subquery selecting it, and WHERE rownum <= N over that)' : 'OVER aggregations';
        throw new SqlUnsupportedError(feature, expression.position, scope.text);
      }
      if (AGGREGATE_FUNCTIONS.has(expression.name)) {
        throw sqlError(scope, `the aggregate ${expression.name} stands only in the SELECT list or HAVING of a grouped query`, expression.position);
      }
      return callFunction(expression, scope);
    default:
      return expression satisfies never;
  }
}

function literal(value: string | number | boolean | null, text: string): Compiled {
  if (value === null) return { type: NULL_TYPE, evaluate: () => null };
  if (typeof value === 'boolean') return constant({ ...BOOLEAN, nullable: false }, value);
  if (typeof value === 'string') return constant({ ...STRING, nullable: false }, value);
  if (/[eE]/.test(text)) return constant({ ...DOUBLE, nullable: false }, value);
  if (text.includes('.')) {
    const [whole = '', fraction = ''] = text.split('.');
    const scale = fraction.length;
    const precision = Math.max(1, whole.replace(/^0+/, '').length + scale);
    return constant(decimal(precision, scale, false), toDecimal(text, 38, scale));
  }
  return constant({ ...(Math.abs(value) <= 2_147_483_647 ? INT : BIGINT), nullable: false }, value);
}

function constant(type: SqlType, value: SqlValue): Compiled {
  return { type, evaluate: () => value };
}

function typedLiteral(expression: Extract<Expression, { kind: 'typedLiteral' }>, scope: Scope): Compiled {
  if (expression.type === 'DATE') {
    const days = parseDate(expression.text);
    if (days === undefined) throw sqlError(scope, `'${expression.text}' is not a date: write it as 'yyyy-MM-dd'`, expression.position);
    return constant({ ...DATE, nullable: false }, days);
  }
  const wall = parseWallClock(expression.text);
  if (wall === undefined) throw sqlError(scope, `'${expression.text}' is not a timestamp: write it as 'yyyy-MM-dd HH:mm:ss[.SSS]'`, expression.position);
  return constant(timestamp('TIMESTAMP', 3, false), wall);
}

export function compileBoolean(expression: Expression, scope: Scope, clause: string): Compiled {
  const compiled = compileExpression(expression, scope);
  if (compiled.type.kind !== 'BOOLEAN' && compiled.type.kind !== 'NULL') {
    throw sqlError(scope, `${clause} needs a BOOLEAN condition, not ${typeName(compiled.type)}`, expression.position);
  }
  return compiled;
}

function not(operand: Compiled): Compiled {
  return { type: BOOLEAN, evaluate: (row) => (operand.evaluate(row) === null ? null : !operand.evaluate(row)) };
}

function negate(operand: Compiled, scope: Scope, position: SqlPosition): Compiled {
  const { type } = operand;
  if (!isNumeric(type)) throw sqlError(scope, `cannot negate ${typeName(type)}`, position);
  if (type.kind === 'DECIMAL') return { type, evaluate: (row) => nullOr(operand.evaluate(row), (v) => decimalNegate(String(v))) };
  const wrap = wrapInteger(type.kind);
  return { type, evaluate: (row) => nullOr(operand.evaluate(row), (v) => wrap(-(v as number))) };
}

function nullOr(value: SqlValue, then: (value: SqlValue) => SqlValue): SqlValue {
  return value === null ? null : then(value);
}

function binary(expression: Extract<Expression, { kind: 'binary' }>, scope: Scope): Compiled {
  const { operator, position } = expression;
  if (operator === 'AND' || operator === 'OR') return logical(operator, compileBoolean(expression.left, scope, operator), compileBoolean(expression.right, scope, operator));
  if ((operator === '+' || operator === '-') && isInterval(expression.right)) {
    return shiftTime(compileExpression(expression.left, scope), expression.right, operator === '+' ? 1 : -1, scope, position);
  }
  if (operator === '+' && isInterval(expression.left)) return shiftTime(compileExpression(expression.right, scope), expression.left, 1, scope, position);
  const left = compileExpression(expression.left, scope);
  const right = compileExpression(expression.right, scope);
  if (operator === '||') return concat(left, right, scope, position);
  if (['=', '<>', '<', '<=', '>', '>='].includes(operator)) return comparison(operator, left, right, scope, position);
  return arithmetic(operator, left, right, scope, position);
}

function logical(operator: 'AND' | 'OR', left: Compiled, right: Compiled): Compiled {
  const decisive = operator === 'OR';
  return {
    type: BOOLEAN,
    evaluate: (row) => {
      const a = left.evaluate(row);
      if (a === decisive) return decisive;
      const b = right.evaluate(row);
      if (b === decisive) return decisive;
      return a === null || b === null ? null : !decisive;
    },
  };
}

type IntervalLiteral = Extract<Expression, { kind: 'interval' | 'monthInterval' }>;

function isInterval(expression: Expression): expression is IntervalLiteral {
  return expression.kind === 'interval' || expression.kind === 'monthInterval';
}

/** A timestamp or a DATE moved by an interval literal, `sign` times: its type kept, a time attribute's as a plain time. */
function shiftTime(operand: Compiled, interval: IntervalLiteral, sign: 1 | -1, scope: Scope, position: SqlPosition): Compiled {
  const { type } = operand;
  if (!isDateTime(type)) throw sqlError(scope, `an INTERVAL is added to a TIMESTAMP, TIMESTAMP_LTZ or DATE, not to ${typeName(type)}`, position);
  const step = interval.kind === 'interval' ? byMillis(type.kind, sign * interval.millis) : byMonths(type.kind, sign * interval.months);
  return { type: plainTime(type), evaluate: (row) => nullOr(operand.evaluate(row), (v) => step(v as number)) };
}

function concat(left: Compiled, right: Compiled, scope: Scope, position: SqlPosition): Compiled {
  for (const side of [left, right]) {
    if (side.type.kind !== 'STRING' && side.type.kind !== 'NULL') throw sqlError(scope, `|| concatenates strings, not ${typeName(side.type)}: CAST it AS STRING`, position);
  }
  return { type: STRING, evaluate: (row) => nullOr(left.evaluate(row), (a) => nullOr(right.evaluate(row), (b) => `${String(a)}${String(b)}`)) };
}

function comparison(operator: string, left: Compiled, right: Compiled, scope: Scope, position: SqlPosition): Compiled {
  const type = commonType([left.type, right.type], scope, position, `the comparison ${operator}`);
  const test = COMPARISONS[operator] as (order: number) => boolean;
  return {
    type: BOOLEAN,
    evaluate: (row) => {
      const a = left.evaluate(row);
      const b = right.evaluate(row);
      if (a === null || b === null) return null;
      return test(compareValues(widen(a, left.type, type), widen(b, right.type, type), type));
    },
  };
}

const COMPARISONS: Record<string, (order: number) => boolean> = {
  '=': (o) => o === 0,
  '<>': (o) => o !== 0,
  '<': (o) => o < 0,
  '<=': (o) => o <= 0,
  '>': (o) => o > 0,
  '>=': (o) => o >= 0,
};

/** A function call: a function createTemporarySystemFunction registered, which shadows a built-in of its name as in Flink, else a built-in. */
function callFunction(expression: Extract<Expression, { kind: 'call' }>, scope: Scope): Compiled {
  const args = expression.args.map((arg) => compileExpression(arg, scope));
  const context = { scope, position: expression.position, args: expression.args };
  const user = scope.functions.get(expression.name);
  return user ? callUserFunction(user, args, context) : scalarFunction(expression.name, args, context);
}

/** Flink's DECIMAL result types (LogicalTypeMerging): precision capped at 38, keeping at least 6 fraction digits when it must give some up. */
function boundedDecimal(precision: number, scale: number): SqlType {
  if (precision <= 38) return decimal(precision, scale);
  const whole = precision - scale;
  const kept = Math.max(38 - whole, Math.min(scale, 6));
  return decimal(38, kept);
}

function arithmetic(operator: string, left: Compiled, right: Compiled, scope: Scope, position: SqlPosition): Compiled {
  for (const side of [left, right]) {
    if (!isNumeric(side.type) && side.type.kind !== 'NULL') throw sqlError(scope, `${operator} needs numbers, not ${typeName(side.type)}`, position);
  }
  const kind = commonNumeric(left.type, right.type);
  if (kind === 'DECIMAL') return decimalArithmetic(operator, left, right);
  const type: SqlType = { kind, nullable: true } as SqlType;
  const apply = numberOperation(operator, kind);
  return { type, evaluate: (row) => nullOr(left.evaluate(row), (a) => nullOr(right.evaluate(row), (b) => apply(Number(a), Number(b)))) };
}

function numberOperation(operator: string, kind: SqlType['kind']): (a: number, b: number) => SqlValue {
  const integer = kind !== 'DOUBLE';
  const wrap = wrapInteger(kind);
  switch (operator) {
    case '+':
      return (a, b) => wrap(a + b);
    case '-':
      return (a, b) => wrap(a - b);
    case '*':
      // INT's product may pass 2^53, where a double loses the low bits that Java's int keeps.
      return kind === 'INT' ? (a, b) => Math.imul(a, b) : (a, b) => wrap(a * b);
    case '/':
      return integer
        ? (a, b) => {
            if (b === 0) throw new Error('division by zero in an integer division (Flink fails the same way): guard it with NULLIF(divisor, 0)');
            return wrap(Math.trunc(a / b));
          }
        : (a, b) => a / b;
    default:
      return (a, b) => a % b;
  }
}

function decimalArithmetic(operator: string, left: Compiled, right: Compiled): Compiled {
  const a = asDecimal(left.type);
  const b = asDecimal(right.type);
  const type =
    operator === '+' || operator === '-'
      ? boundedDecimal(Math.max(a.precision - a.scale, b.precision - b.scale) + Math.max(a.scale, b.scale) + 1, Math.max(a.scale, b.scale))
      : operator === '*'
        ? boundedDecimal(a.precision + b.precision + 1, a.scale + b.scale)
        : operator === '/'
          ? boundedDecimal(a.precision - a.scale + b.scale + Math.max(6, a.scale + b.precision + 1), Math.max(6, a.scale + b.precision + 1))
          : boundedDecimal(Math.min(a.precision - a.scale, b.precision - b.scale) + Math.max(a.scale, b.scale), Math.max(a.scale, b.scale));
  const scale = (type as { scale: number }).scale;
  const apply = (x: string, y: string): SqlValue => {
    switch (operator) {
      case '+':
        return decimalAdd(x, y, scale);
      case '-':
        return decimalSubtract(x, y, scale);
      case '*':
        return decimalMultiply(x, y, scale);
      case '/':
        return decimalDivide(x, y, scale);
      default:
        return toDecimal(String(Number(x) % Number(y)), 38, scale);
    }
  };
  return { type, evaluate: (row) => nullOr(left.evaluate(row), (x) => nullOr(right.evaluate(row), (y) => apply(String(x), String(y)))) };
}

function between(expression: Extract<Expression, { kind: 'between' }>, scope: Scope): Compiled {
  const { operand, low, high, negated, position } = expression;
  const lower = comparison('>=', compileExpression(operand, scope), compileExpression(low, scope), scope, position);
  const upper = comparison('<=', compileExpression(operand, scope), compileExpression(high, scope), scope, position);
  const both = logical('AND', lower, upper);
  return negated ? not(both) : both;
}

function inList(expression: Extract<Expression, { kind: 'in' }>, scope: Scope): Compiled {
  const operand = compileExpression(expression.operand, scope);
  const tests = expression.list.map((item) => comparison('=', operand, compileExpression(item, scope), scope, item.position));
  const any = tests.reduce((a, b) => logical('OR', a, b));
  return expression.negated ? not(any) : any;
}

function like(expression: Extract<Expression, { kind: 'like' }>, scope: Scope): Compiled {
  const operand = compileExpression(expression.operand, scope);
  const pattern = compileExpression(expression.pattern, scope);
  for (const side of [operand, pattern]) {
    if (side.type.kind !== 'STRING' && side.type.kind !== 'NULL') throw sqlError(scope, `LIKE compares strings, not ${typeName(side.type)}`, expression.position);
  }
  const patterns = new Map<string, RegExp>();
  const regexOf = (text: string) => {
    let regex = patterns.get(text);
    if (!regex) {
      const source = Array.from(text).map((c) => (c === '%' ? '[\\s\\S]*' : c === '_' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
      regex = new RegExp(`^${source}$`, 'u');
      patterns.set(text, regex);
    }
    return regex;
  };
  const negated = expression.negated;
  return {
    type: BOOLEAN,
    evaluate: (row) => nullOr(operand.evaluate(row), (s) => nullOr(pattern.evaluate(row), (p) => regexOf(String(p)).test(String(s)) !== negated)),
  };
}

function cast(operand: Compiled, written: TypeName, safe: boolean, scope: Scope): Compiled {
  const target = resolveType(written, scope.text);
  const cast = castTo(operand, target, safe, scope.zone);
  if (!cast) throw sqlError(scope, `CAST from ${typeName(operand.type)} to ${typeName(target)} is not supported`, written.position);
  return cast;
}

function caseWhen(expression: Extract<Expression, { kind: 'case' }>, scope: Scope): Compiled {
  const subject = expression.operand && compileExpression(expression.operand, scope);
  const conditions = expression.branches.map(({ when }) =>
    subject ? comparison('=', subject, compileExpression(when, scope), scope, when.position) : compileBoolean(when, scope, 'WHEN'),
  );
  const results = [...expression.branches.map(({ then }) => compileExpression(then, scope)), ...(expression.otherwise ? [compileExpression(expression.otherwise, scope)] : [])];
  const type = commonType(
    results.map((r) => r.type),
    scope,
    expression.position,
    'CASE',
  );
  const values = results.map((r) => (row: Row) => widen(r.evaluate(row), r.type, type));
  const otherwise = expression.otherwise ? values[values.length - 1] : undefined;
  return {
    type: { ...type, nullable: true },
    evaluate: (row) => {
      for (let i = 0; i < conditions.length; i++) if ((conditions[i] as Compiled).evaluate(row) === true) return (values[i] as (row: Row) => SqlValue)(row);
      return otherwise ? otherwise(row) : null;
    },
  };
}
