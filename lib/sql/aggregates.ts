import type { AggregateFunction } from '../api/functions.js';
import type { Expression } from './ast.js';
import { decimalAdd, decimalDivide, decimalSubtract } from './decimal.js';
import { SqlError } from './errors.js';
import type { Compiled, Row, Scope } from './compiled.js';
import { compileBoolean, compileExpression } from './expressions.js';
import { BIGINT, decimal, isInteger, isNumeric, typeName, wrapInteger, type SqlType, type SqlValue } from './types.js';
import { compareValues } from './values.js';

/** One aggregate call of a grouped query, compiled against its input. */
export interface AggregateCall {
  readonly expression: Extract<Expression, { kind: 'call' }>;
  readonly type: SqlType;
  /** What it keeps per group and window: JSON, as state is. */
  readonly create: () => unknown;
  readonly add: (accumulator: unknown, row: Row) => unknown;
  /** Two accumulators as one, for session windows that merge. */
  readonly merge: (a: unknown, b: unknown) => unknown;
  readonly result: (accumulator: unknown) => SqlValue;
  /** Takes a row's value back out, where the input is a changelog (-U, -D): only for a call compiled `retracting`. */
  readonly retract?: (accumulator: unknown, row: Row) => unknown;
}

interface Accumulation {
  readonly type: SqlType;
  readonly create: () => unknown;
  /** Adds a non-null value. */
  readonly add: (accumulator: unknown, value: SqlValue) => unknown;
  readonly merge: (a: unknown, b: unknown) => unknown;
  readonly result: (accumulator: unknown) => SqlValue;
}

/** An accumulation whose values can also be taken back out, as a changelog's -U and -D take them. */
interface Retractable extends Accumulation {
  /** Takes back a non-null value that was added. */
  readonly retract: (accumulator: unknown, value: SqlValue) => unknown;
}

/** Merges accumulators that are null until a first value, with `combine` once both have one. */
function mergingNulls(combine: (a: unknown, b: unknown) => unknown): (a: unknown, b: unknown) => unknown {
  return (a, b) => (a === null ? b : b === null ? a : combine(a, b));
}

function sumOf(type: SqlType): Accumulation {
  if (type.kind === 'DECIMAL') {
    const scale = type.scale;
    return {
      type: decimal(38, scale),
      create: () => null,
      add: (sum, v) => decimalAdd(sum === null ? '0' : (sum as string), String(v), scale),
      merge: mergingNulls((a, b) => decimalAdd(a as string, b as string, scale)),
      result: (sum) => sum as SqlValue,
    };
  }
  // SUM keeps its input's type, and overflows in it, as Flink's does.
  const wrap = wrapInteger(type.kind);
  return {
    type,
    create: () => null,
    add: (sum, v) => wrap((sum === null ? 0 : (sum as number)) + (v as number)),
    merge: mergingNulls((a, b) => wrap((a as number) + (b as number))),
    result: (sum) => sum as SqlValue,
  };
}

/** AVG as Flink's: an integer average summed in a BIGINT and truncated to its type, a DECIMAL one with at least 6 fraction digits. */
function averageOf(type: SqlType): Accumulation {
  const sum = sumOf(isInteger(type) ? BIGINT : type);
  const scale = type.kind === 'DECIMAL' ? Math.max(6, type.scale) : 0;
  const divide = (total: SqlValue, count: number): SqlValue =>
    type.kind === 'DECIMAL' ? decimalDivide(String(total), String(count), scale) : type.kind === 'DOUBLE' ? (total as number) / count : Math.trunc((total as number) / count);
  return {
    type: type.kind === 'DECIMAL' ? decimal(38, scale) : type,
    create: () => [null, 0],
    add: (accumulator, value) => {
      const [total, count] = accumulator as [unknown, number];
      return [sum.add(total, value), count + 1];
    },
    merge: (a, b) => {
      const [totalA, countA] = a as [unknown, number];
      const [totalB, countB] = b as [unknown, number];
      return [sum.merge(totalA, totalB), countA + countB];
    },
    result: (accumulator) => {
      const [total, count] = accumulator as [SqlValue, number];
      return count === 0 || total === null ? null : divide(total, count);
    },
  };
}

function extremeOf(type: SqlType, sign: 1 | -1): Accumulation {
  return {
    type,
    create: () => null,
    add: (best, v) => (best === null || sign * compareValues(v, best as SqlValue, type) > 0 ? v : best),
    merge: mergingNulls((a, b) => (sign * compareValues(b as SqlValue, a as SqlValue, type) > 0 ? b : a)),
    result: (best) => best as SqlValue,
  };
}

/**
 * The accumulations of an aggregation over a changelog, as Flink's …WithRetract functions: SUM
 * and AVG keep the count of their values, so that a sum of no values is NULL again; MIN and MAX
 * keep how many times each value is there, so that the next best is known when the best leaves.
 */
function retractableOf(call: Extract<Expression, { kind: 'call' }>, type: SqlType): Retractable {
  const plus = type.kind === 'DECIMAL' ? (a: SqlValue, b: SqlValue) => decimalAdd(String(a), String(b), type.scale) : (a: SqlValue, b: SqlValue) => (a as number) + (b as number);
  const minus = type.kind === 'DECIMAL' ? (a: SqlValue, b: SqlValue) => decimalSubtract(String(a), String(b), type.scale) : (a: SqlValue, b: SqlValue) => (a as number) - (b as number);
  const wrapInSum = wrapInteger(call.name === 'SUM' ? type.kind : 'BIGINT');
  const wrap = (n: SqlValue) => (typeof n === 'number' ? wrapInSum(n) : n);
  const unsupportedMerge = () => {
    throw new Error(`${call.name} over a changelog does not merge: it runs in no session window`);
  };
  switch (call.name) {
    case 'COUNT':
      return { type: { ...BIGINT, nullable: false }, create: () => 0, add: (n) => (n as number) + 1, retract: (n) => (n as number) - 1, merge: unsupportedMerge, result: (n) => n as number };
    case 'SUM':
    case 'AVG': {
      const average = call.name === 'AVG' ? averageOf(type) : undefined;
      const summed = call.name === 'SUM' ? sumOf(type) : undefined;
      return {
        type: average?.type ?? summed?.type ?? type,
        create: () => [null, 0],
        add: (accumulator, value) => {
          const [total, count] = accumulator as [SqlValue, number];
          return [wrap(total === null ? value : plus(total, value)), count + 1];
        },
        retract: (accumulator, value) => {
          const [total, count] = accumulator as [SqlValue, number];
          return [wrap(minus(total ?? (type.kind === 'DECIMAL' ? '0' : 0), value)), count - 1];
        },
        merge: unsupportedMerge,
        result: (accumulator) => {
          const [total, count] = accumulator as [SqlValue, number];
          if (count === 0) return null;
          return average ? average.result([total, count]) : total;
        },
      };
    }
    default: {
      const sign = call.name === 'MIN' ? -1 : 1;
      const better = (a: SqlValue, b: SqlValue) => sign * compareValues(a, b, type) > 0;
      return {
        type,
        create: (): Extremes => ({ best: null, counts: {} }),
        add: (accumulator, value) => {
          const extremes = accumulator as Extremes;
          const id = JSON.stringify(value);
          extremes.counts[id] = (extremes.counts[id] ?? 0) + 1;
          if (extremes.best === null || better(value, extremes.best)) extremes.best = value;
          return extremes;
        },
        retract: (accumulator, value) => {
          const extremes = accumulator as Extremes;
          const id = JSON.stringify(value);
          const left = (extremes.counts[id] ?? 0) - 1;
          if (left > 0) extremes.counts[id] = left;
          else delete extremes.counts[id];
          if (left <= 0 && extremes.best !== null && compareValues(value, extremes.best, type) === 0) {
            extremes.best = Object.keys(extremes.counts).reduce<SqlValue>((best, other) => {
              const candidate = JSON.parse(other) as SqlValue;
              return best === null || better(candidate, best) ? candidate : best;
            }, null);
          }
          return extremes;
        },
        merge: unsupportedMerge,
        result: (accumulator) => (accumulator as Extremes).best,
      };
    }
  }
}

/** MIN or MAX over a changelog: the best value, and how many times each value is there, by its JSON. */
interface Extremes {
  best: SqlValue;
  readonly counts: Record<string, number>;
}

function accumulationOf(call: Extract<Expression, { kind: 'call' }>, argument: Compiled | undefined, scope: Scope): Accumulation {
  if (call.name === 'COUNT') {
    return { type: { ...BIGINT, nullable: false }, create: () => 0, add: (n) => (n as number) + 1, merge: (a, b) => (a as number) + (b as number), result: (n) => n as number };
  }
  const type = (argument as Compiled).type;
  const numeric = () => {
    if (!isNumeric(type)) throw new SqlError(`${call.name} needs a number, not ${typeName(type)}`, call.position, scope.text);
  };
  switch (call.name) {
    case 'SUM':
      numeric();
      return sumOf(type);
    case 'AVG':
      numeric();
      return averageOf(type);
    case 'MIN':
      return extremeOf(type, -1);
    default:
      return extremeOf(type, 1);
  }
}

/**
 * Compiles COUNT, SUM, MIN, MAX and AVG, with DISTINCT and FILTER (WHERE …), over a grouped
 * query's input rows; `retracting`, over a changelog's, whose -U and -D rows `retract` takes back.
 */
export function compileAggregate(call: Extract<Expression, { kind: 'call' }>, scope: Scope, retracting = false): AggregateCall {
  if (call.args.length > 1 || (call.args.length === 0 && !call.star)) {
    throw new SqlError(`${call.name} takes one argument${call.name === 'COUNT' ? ' or *' : ''}`, call.position, scope.text);
  }
  const [first] = call.args;
  const argument = first && compileExpression(first, scope);
  const filter = call.filter && compileBoolean(call.filter, scope, 'FILTER');
  const checked = accumulationOf(call, argument, scope);
  const retractable = retracting ? retractableOf(call, argument?.type ?? checked.type) : undefined;
  const accumulation: Accumulation = retractable ?? checked;
  const retractValue = retractable?.retract;
  const counted = (row: Row): SqlValue | undefined => {
    if (filter && filter.evaluate(row) !== true) return undefined;
    if (!argument) return true;
    const value = argument.evaluate(row);
    return value === null ? undefined : value;
  };
  if (!call.distinct) {
    return {
      expression: call,
      type: accumulation.type,
      create: accumulation.create,
      add: (accumulator, row) => {
        const value = counted(row);
        return value === undefined ? accumulator : accumulation.add(accumulator, value);
      },
      merge: accumulation.merge,
      result: accumulation.result,
      ...(retractValue
        ? {
            retract: (accumulator: unknown, row: Row) => {
              const value = counted(row);
              return value === undefined ? accumulator : retractValue(accumulator, value);
            },
          }
        : {}),
    };
  }
  // DISTINCT keeps the values seen, each as its JSON (which tells 1 from '1'), beside the
  // aggregation of those values: a row costs one lookup, whatever the number of values. An
  // accumulator is the operator's own, changed in place as Flink's are; the state backend copies
  // what it keeps.
  // Over a changelog, each value's count: it leaves the aggregation when its last row is retracted.
  const create = (): DistinctAccumulator => ({ seen: {}, of: accumulation.create() });
  const addValue = (accumulator: DistinctAccumulator, value: SqlValue): DistinctAccumulator => {
    const id = JSON.stringify(value);
    if (id in accumulator.seen) {
      if (retractValue) accumulator.seen[id] = (accumulator.seen[id] ?? 0) + 1;
      return accumulator;
    }
    accumulator.seen[id] = 1;
    accumulator.of = accumulation.add(accumulator.of, value);
    return accumulator;
  };
  const retractDistinct = (accumulator: DistinctAccumulator, value: SqlValue, retract: NonNullable<typeof retractValue>): DistinctAccumulator => {
    const id = JSON.stringify(value);
    const left = (accumulator.seen[id] ?? 0) - 1;
    if (left > 0) {
      accumulator.seen[id] = left;
      return accumulator;
    }
    delete accumulator.seen[id];
    accumulator.of = retract(accumulator.of, value);
    return accumulator;
  };
  const addAll = (into: DistinctAccumulator, from: DistinctAccumulator) => Object.keys(from.seen).reduce((merged, id) => addValue(merged, JSON.parse(id) as SqlValue), into);
  return {
    expression: call,
    type: accumulation.type,
    create,
    add: (accumulator, row) => {
      const value = counted(row);
      return value === undefined ? accumulator : addValue(accumulator as DistinctAccumulator, value);
    },
    merge: (a, b) => addAll(addAll(create(), a as DistinctAccumulator), b as DistinctAccumulator),
    result: (accumulator) => accumulation.result((accumulator as DistinctAccumulator).of),
    ...(retractValue
      ? {
          retract: (accumulator: unknown, row: Row) => {
            const value = counted(row);
            return value === undefined ? accumulator : retractDistinct(accumulator as DistinctAccumulator, value, retractValue);
          },
        }
      : {}),
  };
}

/** DISTINCT's accumulator: the values seen, by their JSON (over a changelog, with how many rows hold each), and the aggregation of them. */
interface DistinctAccumulator {
  readonly seen: Record<string, number>;
  of: unknown;
}

/** The aggregate calls of a grouped query as one AggregateFunction over its rows: an accumulator per call. */
export function aggregateFunction(calls: readonly AggregateCall[]): AggregateFunction<Row, unknown[], SqlValue[]> {
  return {
    createAccumulator: () => calls.map((call) => call.create()),
    add: (row, accumulators) => calls.map((call, i) => call.add(accumulators[i], row)),
    getResult: (accumulators) => calls.map((call, i) => call.result(accumulators[i])),
    merge: (a, b) => calls.map((call, i) => call.merge(a[i], b[i])),
  };
}
