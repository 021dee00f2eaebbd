import type { SqlPosition } from './errors.js';

/** The parsed form of the statements Sluice runs; each node keeps where it starts, for errors. */
export type Expression =
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null; readonly text: string; readonly position: SqlPosition }
  | { readonly kind: 'typedLiteral'; readonly type: 'TIMESTAMP' | 'DATE'; readonly text: string; readonly position: SqlPosition }
  | { readonly kind: 'interval'; readonly millis: number; readonly position: SqlPosition }
  /** A year-month interval, `INTERVAL '2' MONTH` or `INTERVAL '1' YEAR`, in months: a calendar step, not a duration. */
  | { readonly kind: 'monthInterval'; readonly months: number; readonly position: SqlPosition }
  | { readonly kind: 'column'; readonly table: string | undefined; readonly name: string; readonly position: SqlPosition }
  | { readonly kind: 'star'; readonly table: string | undefined; readonly position: SqlPosition }
  | { readonly kind: 'unary'; readonly operator: '-' | 'NOT'; readonly operand: Expression; readonly position: SqlPosition }
  | { readonly kind: 'binary'; readonly operator: string; readonly left: Expression; readonly right: Expression; readonly position: SqlPosition }
  | { readonly kind: 'isNull'; readonly operand: Expression; readonly negated: boolean; readonly position: SqlPosition }
  | { readonly kind: 'between'; readonly operand: Expression; readonly low: Expression; readonly high: Expression; readonly negated: boolean; readonly position: SqlPosition }
  | {
      readonly kind: 'in';
      readonly operand: Expression;
      readonly list: readonly Expression[];
      /** `IN (SELECT …)`: the subquery whose one column the operand is looked up in (the list is then empty). */
      readonly query?: Query;
      /** Read from a correlated EXISTS, which has no NULL-aware negation: NOT of it is an anti join. */
      readonly fromExists?: boolean;
      readonly negated: boolean;
      readonly position: SqlPosition;
    }
  | { readonly kind: 'like'; readonly operand: Expression; readonly pattern: Expression; readonly negated: boolean; readonly position: SqlPosition }
  | { readonly kind: 'cast'; readonly operand: Expression; readonly type: TypeName; readonly safe: boolean; readonly position: SqlPosition }
  | {
      readonly kind: 'case';
      readonly operand: Expression | undefined;
      readonly branches: readonly { readonly when: Expression; readonly then: Expression }[];
      readonly otherwise: Expression | undefined;
      readonly position: SqlPosition;
    }
  | {
      readonly kind: 'call';
      readonly name: string;
      readonly args: readonly Expression[];
      readonly distinct: boolean;
      readonly filter: Expression | undefined;
      /** COUNT(*) */
      readonly star: boolean;
      /** `OVER (PARTITION BY … ORDER BY …)`, as ROW_NUMBER() takes it. */
      readonly over: OverClause | undefined;
      readonly position: SqlPosition;
    };

export interface OverClause {
  readonly partitionBy: readonly Expression[];
  readonly orderBy: readonly { readonly expression: Expression; readonly descending: boolean }[];
  /** ROWS or RANGE BETWEEN … PRECEDING AND CURRENT ROW, if written. */
  readonly frame: OverFrame | undefined;
  /** `OVER w`: the SELECT's WINDOW clause defines it, and the parser puts its definition here. */
  readonly windowName?: string;
  readonly position: SqlPosition;
}

/** A frame that ends at the current row: `preceding` rows (ROWS) or ms (RANGE) before it, undefined for UNBOUNDED. */
export interface OverFrame {
  readonly unit: 'ROWS' | 'RANGE';
  readonly preceding: number | undefined;
  readonly position: SqlPosition;
}

/** A type as written: its name, and its parameters such as DECIMAL(10, 2)'s. */
export interface TypeName {
  readonly name: string;
  readonly parameters: readonly number[];
  readonly notNull: boolean;
  readonly position: SqlPosition;
}

export interface SelectItem {
  readonly expression: Expression;
  readonly alias: string | undefined;
}

export type Relation =
  | {
      readonly kind: 'table';
      readonly name: string;
      readonly alias: string | undefined;
      /** FOR SYSTEM_TIME AS OF: the time at which a temporal join reads this versioned table. */
      readonly asOf?: Expression;
      readonly position: SqlPosition;
    }
  | { readonly kind: 'subquery'; readonly query: Query; readonly alias: string | undefined; readonly position: SqlPosition }
  | {
      readonly kind: 'window';
      readonly function: 'TUMBLE' | 'HOP' | 'CUMULATE' | 'SESSION';
      readonly input: Relation;
      /** SESSION's PARTITION BY columns. */
      readonly partitionBy: readonly string[];
      readonly timeColumn: string;
      /** TUMBLE: [size]; HOP: [slide, size]; CUMULATE: [step, size]; then an optional offset. SESSION: [gap]. */
      readonly intervals: readonly number[];
      readonly alias: string | undefined;
      readonly position: SqlPosition;
    }
  | {
      readonly kind: 'join';
      readonly type: JoinType;
      readonly left: Relation;
      readonly right: Relation;
      /** ON's condition; undefined for a comma or CROSS JOIN, which WHERE joins, and for USING and NATURAL. */
      readonly condition: Expression | undefined;
      /** USING's columns, or every column the inputs have in common for a NATURAL JOIN. */
      readonly using?: readonly string[] | 'natural';
      readonly alias?: undefined;
      readonly position: SqlPosition;
    };

export type JoinType = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL';

export interface Select {
  readonly kind: 'select';
  /** SELECT DISTINCT: planned as a GROUP BY of every selected column. */
  readonly distinct: boolean;
  readonly items: readonly SelectItem[];
  readonly from: Relation;
  readonly where: Expression | undefined;
  readonly groupBy: readonly Expression[];
  readonly having: Expression | undefined;
  readonly position: SqlPosition;
}

/** ORDER BY's items: an expression over the query's columns, and its direction. */
export interface SortItem {
  readonly expression: Expression;
  readonly descending: boolean;
}

/**
 * UNION, INTERSECT or EXCEPT of two or more queries, read from the left: `a EXCEPT b EXCEPT c` is
 * `(a EXCEPT b) EXCEPT c`. `all` keeps duplicates (UNION ALL); without it the result is distinct.
 */
export interface SetOperation {
  readonly kind: 'setOperation';
  readonly operator: 'UNION' | 'INTERSECT' | 'EXCEPT';
  readonly all: boolean;
  readonly inputs: readonly Query[];
  readonly position: SqlPosition;
}

export type Query =
  | Select
  | SetOperation
  | {
      readonly kind: 'sorted';
      readonly query: Query;
      /** ORDER BY's items; none for a LIMIT alone. */
      readonly orderBy: readonly SortItem[];
      /** LIMIT n (or FETCH FIRST n ROWS ONLY), if written. */
      readonly limit: number | undefined;
      /** OFFSET m: how many of the first rows are skipped before the LIMIT's (0 without it). */
      readonly offset: number;
      readonly position: SqlPosition;
    };

export type ColumnDefinition =
  | { readonly kind: 'physical'; readonly name: string; readonly type: TypeName; readonly position: SqlPosition }
  | { readonly kind: 'computed'; readonly name: string; readonly expression: Expression; readonly position: SqlPosition }
  | {
      readonly kind: 'metadata';
      readonly name: string;
      readonly type: TypeName;
      readonly key: string;
      readonly virtual: boolean;
      readonly position: SqlPosition;
    };

export interface CreateTable {
  readonly kind: 'createTable';
  readonly name: string;
  readonly ifNotExists: boolean;
  readonly columns: readonly ColumnDefinition[];
  readonly watermark: { readonly column: string; readonly expression: Expression; readonly position: SqlPosition } | undefined;
  readonly primaryKey: readonly string[] | undefined;
  readonly options: ReadonlyMap<string, string>;
  readonly position: SqlPosition;
}

export type Statement =
  | CreateTable
  | { readonly kind: 'createView'; readonly name: string; readonly query: Query; readonly position: SqlPosition }
  | { readonly kind: 'set'; readonly key: string; readonly value: string; readonly position: SqlPosition }
  | { readonly kind: 'insert'; readonly table: string; readonly columns: readonly string[] | undefined; readonly query: Query; readonly position: SqlPosition }
  | { readonly kind: 'statementSet'; readonly inserts: readonly Extract<Statement, { kind: 'insert' }>[]; readonly position: SqlPosition }
  | { readonly kind: 'query'; readonly query: Query; readonly position: SqlPosition };

/** The expression with each subexpression `replace` gives a replacement for replaced. */
export function rewriteExpression(expression: Expression, replace: (expression: Expression) => Expression | undefined): Expression {
  const replaced = replace(expression);
  if (replaced) return replaced;
  const again = (e: Expression) => rewriteExpression(e, replace);
  switch (expression.kind) {
    case 'unary':
    case 'isNull':
    case 'cast':
      return { ...expression, operand: again(expression.operand) };
    case 'binary':
      return { ...expression, left: again(expression.left), right: again(expression.right) };
    case 'between':
      return { ...expression, operand: again(expression.operand), low: again(expression.low), high: again(expression.high) };
    case 'in':
      return { ...expression, operand: again(expression.operand), list: expression.list.map(again) };
    case 'like':
      return { ...expression, operand: again(expression.operand), pattern: again(expression.pattern) };
    case 'case':
      return {
        ...expression,
        operand: expression.operand && again(expression.operand),
        branches: expression.branches.map((b) => ({ when: again(b.when), then: again(b.then) })),
        otherwise: expression.otherwise && again(expression.otherwise),
      };
    case 'call':
      return { ...expression, args: expression.args.map(again), filter: expression.filter && again(expression.filter) };
    default:
      return expression;
  }
}

/** An expression's parts joined by AND, outermost first: a WHERE or ON clause as its conditions. */
export function conjuncts(expression: Expression | undefined): Expression[] {
  if (!expression) return [];
  return expression.kind === 'binary' && expression.operator === 'AND' ? [...conjuncts(expression.left), ...conjuncts(expression.right)] : [expression];
}

/** Conditions joined by AND again; undefined for none. */
export function conjunction(conditions: readonly Expression[]): Expression | undefined {
  if (conditions.length === 0) return undefined;
  return conditions.reduce((a, b) => ({ kind: 'binary', operator: 'AND', left: a, right: b, position: a.position }));
}
