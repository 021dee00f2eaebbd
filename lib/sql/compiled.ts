import { SqlError, type SqlPosition } from './errors.js';
import type { SqlType, SqlValue } from './types.js';

/** A column a query can name: its name, its type, and the table or alias that qualifies it. */
export interface Field {
  readonly name: string;
  readonly type: SqlType;
  readonly qualifier?: string | undefined;
  /** A column a plan adds for itself (a Top-N's rank before its query names it): `*` leaves it out. */
  readonly hidden?: boolean;
  /** An input's column of a JOIN … USING: named only with its table's name, as the joined column takes its own; `*` leaves it out. */
  readonly qualifiedOnly?: boolean;
  /**
   * The start or end of the window a row is of, carried as the column is selected: a GROUP BY of
   * both is a window aggregation, a Top-N partitioned by both a window Top-N.
   */
  readonly window?: WindowBound;
}

/** Which bound of which windows a column holds. */
export interface WindowBound {
  readonly bound: 'start' | 'end';
  /** The window table function or window aggregation that made the windows, one symbol each. */
  readonly of: symbol;
  /**
   * Whether a row may come after the watermark passed its window's end, and is then late: a
   * window table function's rows may; a window aggregation's all come before.
   */
  readonly rowsMayBeLate: boolean;
}

/** The columns of rows an operator emits as their windows close: none of them is late downstream. */
export function emittedAtWindowEnd(fields: readonly Field[]): Field[] {
  return fields.map((field) => (field.window ? { ...field, window: { ...field.window, rowsMayBeLate: false } } : field));
}

/** A column that holds the bound of the rows' windows, and its position in the row. */
export interface WindowColumn {
  readonly index: number;
  readonly window: WindowBound;
}

/**
 * The last millisecond of the window a row is of, when the watermark has not passed it; undefined
 * when it has and the row may be late for its window (a window table function's row), so that
 * every operator that waits for its rows' windows to close drops the same late rows, as Flink does.
 */
export function windowStillOpen(row: Row, end: WindowColumn, watermark: number): number | undefined {
  const lastMillisecond = (row[end.index] as number) - 1;
  return end.window.rowsMayBeLate && lastMillisecond <= watermark ? undefined : lastMillisecond;
}

/** What an expression may name, and the session it is evaluated in. */
export interface Scope {
  readonly fields: readonly Field[];
  readonly text: string;
  /** table.local-time-zone */
  readonly zone: string;
  /** Expressions a grouped query has computed already (its keys and aggregates): their canonical text → position in the row. */
  readonly computed?: ReadonlyMap<string, number>;
  /** The values an OVER aggregation has added to each row: each OVER call's canonical text → position in the row. */
  readonly overResults?: ReadonlyMap<string, number>;
  /** The user-defined functions registered with createTemporarySystemFunction, by upper-case name. */
  readonly functions: ReadonlyMap<string, UserFunction>;
}

/** A user-defined scalar function as registered, its types resolved (lib/sql/user-functions.ts). */
export interface UserFunction {
  readonly name: string;
  readonly argumentTypes: readonly SqlType[];
  readonly resultType: SqlType;
  readonly eval: (...args: SqlValue[]) => SqlValue | undefined;
}

/** A row: its columns' values in order. Mutable only for the DataStream API's sake: no operator changes a row it is given. */
export type Row = SqlValue[];

export interface Compiled {
  readonly type: SqlType;
  readonly evaluate: (row: Row) => SqlValue;
}

export function sqlError(scope: Scope, reason: string, position: SqlPosition): SqlError {
  return new SqlError(reason, position, scope.text);
}

