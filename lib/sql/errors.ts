/** Where a token starts in the SQL text: 1-based line and column, and the offset into the text. */
export interface SqlPosition {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/** The line of `text` that holds `position`, with a caret under its column, as Flink's errors show it. */
function excerpt(text: string, position: SqlPosition): string {
  const line = text.split('\n')[position.line - 1] ?? '';
  return `${line}\n${' '.repeat(Math.max(0, position.column - 1))}^`;
}

/**
 * A statement Sluice cannot run: a syntax or validation error, named by its line and column
 * with the line and a caret below it.
 */
export class SqlError extends Error {
  override readonly name: string = 'SqlError';
  constructor(
    readonly reason: string,
    readonly position: SqlPosition | undefined,
    text: string | undefined,
  ) {
    super(position === undefined || text === undefined ? reason : `SQL error at line ${position.line}, column ${position.column}: ${reason}\n${excerpt(text, position)}`);
  }
}

/** A feature of Flink SQL that Sluice recognises and does not run yet (docs/sql.md lists them). */
export class SqlUnsupportedError extends SqlError {
  override readonly name = 'SqlUnsupportedError';
  constructor(feature: string, position: SqlPosition | undefined, text: string | undefined) {
    super(`${feature} is not supported by Sluice yet (docs/sql.md, "Status", lists what is)`, position, text);
  }
}
