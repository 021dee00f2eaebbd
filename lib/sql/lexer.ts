import { SqlError, type SqlPosition } from './errors.js';

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol' | 'end';

/**
 * A token of Flink SQL. A `word` is an identifier or keyword (its `upper` compares keywords), a
 * `quoted` one a back-quoted identifier, `string` a '…' literal with '' unescaped.
 */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly upper: string;
  readonly position: SqlPosition;
}

const SYMBOLS = ['<>', '<=', '>=', '!=', '||', '(', ')', ',', '.', ';', '=', '<', '>', '+', '-', '*', '/', '%'];

/** Splits SQL text into tokens, skipping whitespace and -- and /* *\/ comments. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let offset = 0;
  let line = 1;
  let lineStart = 0;
  const positionAt = (at: number): SqlPosition => ({ offset: at, line, column: at - lineStart + 1 });
  const advanceTo = (end: number) => {
    for (let i = offset; i < end; i++) {
      if (text[i] === '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    offset = end;
  };
  const push = (kind: TokenKind, value: string, start: SqlPosition, end: number) => {
    tokens.push({ kind, text: value, upper: kind === 'word' ? value.toUpperCase() : value, position: start });
    advanceTo(end);
  };
  while (offset < text.length) {
    const rest = text.slice(offset);
    const start = positionAt(offset);
    const blank = /^(\s+|--[^\n]*|\/\*[\s\S]*?\*\/)/.exec(rest);
    if (blank) {
      advanceTo(offset + blank[0].length);
      continue;
    }
    if (rest.startsWith('/*')) throw new SqlError('a comment opened with /* is never closed with */', start, text);
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(rest);
    if (word) {
      push('word', word[0], start, offset + word[0].length);
      continue;
    }
    const number = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(rest);
    if (number) {
      push('number', number[0], start, offset + number[0].length);
      continue;
    }
    if (rest[0] === "'" || rest[0] === '`') {
      const quote = rest[0];
      let end = 1;
      let value = '';
      for (;;) {
        const next = rest.indexOf(quote, end);
        if (next < 0) throw new SqlError(quote === "'" ? 'a string literal is never closed with \'' : 'an identifier quoted with ` is never closed', start, text);
        value += rest.slice(end, next);
        if (rest[next + 1] !== quote) {
          end = next + 1;
          break;
        }
        value += quote;
        end = next + 2;
      }
      push(quote === "'" ? 'string' : 'quoted', value, start, offset + end);
      continue;
    }
    const symbol = SYMBOLS.find((s) => rest.startsWith(s));
    if (!symbol) throw new SqlError(`unexpected character "${rest[0]}"`, start, text);
    push('symbol', symbol, start, offset + symbol.length);
  }
  tokens.push({ kind: 'end', text: '', upper: '', position: positionAt(offset) });
  return tokens;
}
