import { conjunction, conjuncts, rewriteExpression, type ColumnDefinition, type CreateTable, type Expression, type JoinType, type OverClause, type OverFrame, type Query, type Relation, type Select, type SelectItem, type SetOperation, type SortItem, type Statement, type TypeName } from './ast.js';
import { SqlError, SqlUnsupportedError, type SqlPosition } from './errors.js';
import { tokenize, type Token } from './lexer.js';
import { CALENDAR_UNITS, ROUNDING_UNITS } from './time.js';

/** Words that end an expression or a relation, so that they are never read as an alias. */
const RESERVED = new Set(
  (
    'SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT UNION ALL AS AND OR NOT IS NULL TRUE FALSE CASE WHEN THEN ELSE END ' +
    'JOIN INNER LEFT RIGHT FULL CROSS ON USING WINDOW MATCH_RECOGNIZE OVER INSERT INTO VALUES WITH BETWEEN IN LIKE ' +
    'DISTINCT TABLE FOR SYSTEM_TIME INTERVAL LATERAL EXCEPT INTERSECT MINUS NATURAL OUTER FETCH OFFSET'
  ).split(' '),
);

const INTERVAL_UNITS: Record<string, number> = {
  SECOND: 1000,
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
};

/** The year-month interval units, in months. */
const MONTH_INTERVAL_UNITS: Readonly<Record<string, number>> = { MONTH: 1, YEAR: 12 };

/** EXTRACT's units, each as the function that gives the same field. */
const EXTRACT_UNITS: Readonly<Record<string, string>> = {
  YEAR: 'YEAR',
  QUARTER: 'QUARTER',
  MONTH: 'MONTH',
  WEEK: 'WEEK',
  DAY: 'DAYOFMONTH',
  DOY: 'DAYOFYEAR',
  DOW: 'DAYOFWEEK',
  HOUR: 'HOUR',
  MINUTE: 'MINUTE',
  SECOND: 'SECOND',
};

/** Statements Flink SQL has and Sluice does not run yet, named by their first words. */
const UNSUPPORTED_STATEMENTS: readonly [RegExp, string][] = [
  [/^CREATE (TEMPORARY )?(SYSTEM )?FUNCTION/, 'CREATE FUNCTION (register a TypeScript function with tableEnv.createTemporarySystemFunction instead)'],
  [/^CREATE (CATALOG|DATABASE)/, 'CREATE CATALOG and CREATE DATABASE'],
  [/^(ALTER|DROP|DESCRIBE|DESC|SHOW|USE|EXPLAIN|ANALYZE|LOAD|UNLOAD|RESET|TRUNCATE|DELETE|UPDATE|CALL)\b/, 'this statement'],
];

/** Parses a script of `;`-separated Flink SQL statements. */
export function parseStatements(text: string): Statement[] {
  return new Parser(text).statements();
}

/** Parses one query (a SELECT or a UNION ALL of them), as Table API's sqlQuery takes it. */
export function parseQuery(text: string): Query {
  const parser = new Parser(text);
  const query = parser.query();
  parser.expectEnd();
  return query;
}

class Parser {
  private readonly tokens: Token[];
  private at = 0;

  constructor(private readonly text: string) {
    this.tokens = tokenize(text);
  }

  statements(): Statement[] {
    const statements: Statement[] = [];
    for (;;) {
      while (this.accept(';')) {
        /* empty statements */
      }
      if (this.peek().kind === 'end') return statements;
      statements.push(this.statement());
      if (this.peek().kind !== 'end') this.expect(';');
    }
  }

  expectEnd(): void {
    this.accept(';');
    if (this.peek().kind !== 'end') throw this.error(`expected the end of the query, found ${this.describe(this.peek())}`);
  }

  private statement(): Statement {
    const start = this.peek();
    const head = this.tokens
      .slice(this.at, this.at + 4)
      .map((t) => t.upper)
      .join(' ');
    for (const [pattern, feature] of UNSUPPORTED_STATEMENTS) {
      if (pattern.test(head)) throw new SqlUnsupportedError(feature === 'this statement' ? start.upper : feature, start.position, this.text);
    }
    if (this.acceptWords('SET')) {
      const key = this.string();
      this.expect('=');
      return { kind: 'set', key, value: this.string(), position: start.position };
    }
    if (this.acceptWords('CREATE')) {
      this.acceptWords('TEMPORARY');
      if (this.acceptWords('VIEW')) {
        this.acceptWords('IF', 'NOT', 'EXISTS');
        const name = this.qualifiedName();
        this.expectWords('AS');
        return { kind: 'createView', name, query: this.query(), position: start.position };
      }
      this.expectWords('TABLE');
      return this.createTable(start.position);
    }
    if (this.acceptWords('EXECUTE', 'STATEMENT', 'SET') || this.acceptWords('BEGIN', 'STATEMENT', 'SET')) {
      this.acceptWords('BEGIN');
      this.accept(';');
      const inserts: Extract<Statement, { kind: 'insert' }>[] = [];
      while (!this.acceptWords('END')) {
        inserts.push(this.insert());
        this.accept(';');
      }
      return { kind: 'statementSet', inserts, position: start.position };
    }
    if (this.peek().upper === 'INSERT') return this.insert();
    if (this.peek().upper === 'SELECT' || this.peek().upper === 'WITH' || this.peek().text === '(') return { kind: 'query', query: this.query(), position: start.position };
    throw this.error(`expected a statement (CREATE TABLE, CREATE VIEW, SET, INSERT INTO, EXECUTE STATEMENT SET, SELECT or WITH), found ${this.describe(start)}`);
  }

  private insert(): Extract<Statement, { kind: 'insert' }> {
    const start = this.peek();
    this.expectWords('INSERT');
    if (!this.acceptWords('INTO')) {
      if (this.peek().upper === 'OVERWRITE') throw new SqlUnsupportedError('INSERT OVERWRITE', this.peek().position, this.text);
      this.expectWords('INTO');
    }
    const table = this.qualifiedName();
    let columns: string[] | undefined;
    if (this.peek().text === '(' && this.tokens[this.at + 1]?.upper !== 'SELECT' && this.tokens[this.at + 1]?.upper !== 'WITH') {
      this.expect('(');
      columns = this.commaSeparated(() => this.identifier());
      this.expect(')');
    }
    return { kind: 'insert', table, columns, query: this.query(), position: start.position };
  }

  private createTable(position: SqlPosition): CreateTable {
    const ifNotExists = this.acceptWords('IF', 'NOT', 'EXISTS');
    const name = this.qualifiedName();
    if (this.peek().upper === 'LIKE' || this.peek().upper === 'AS') throw new SqlUnsupportedError(`CREATE TABLE … ${this.peek().upper}`, this.peek().position, this.text);
    this.expect('(');
    const columns: ColumnDefinition[] = [];
    let watermark: CreateTable['watermark'];
    let primaryKey: string[] | undefined;
    do {
      const start = this.peek();
      if (this.acceptWords('WATERMARK')) {
        this.expectWords('FOR');
        const column = this.identifier();
        this.expectWords('AS');
        watermark = { column, expression: this.expression(), position: start.position };
      } else if (this.acceptWords('PRIMARY')) {
        this.expectWords('KEY');
        this.expect('(');
        primaryKey = this.commaSeparated(() => this.identifier());
        this.expect(')');
        this.expectWords('NOT');
        this.expectWords('ENFORCED');
      } else if (this.peek().upper === 'CONSTRAINT') {
        this.next();
        this.identifier();
        continue;
      } else {
        columns.push(this.column());
      }
    } while (this.accept(','));
    this.expect(')');
    if (this.acceptWords('COMMENT')) this.string();
    if (this.peek().upper === 'PARTITIONED' || this.peek().upper === 'DISTRIBUTED') throw new SqlUnsupportedError(`${this.peek().upper} BY`, this.peek().position, this.text);
    const options = new Map<string, string>();
    if (this.acceptWords('WITH')) {
      this.expect('(');
      if (this.peek().text !== ')') {
        do {
          const key = this.string();
          this.expect('=');
          options.set(key, this.string());
        } while (this.accept(','));
      }
      this.expect(')');
    }
    return { kind: 'createTable', name, ifNotExists, columns, watermark, primaryKey, options, position };
  }

  private column(): ColumnDefinition {
    const start = this.peek();
    const name = this.identifier();
    if (this.acceptWords('AS')) return { kind: 'computed', name, expression: this.expression(), position: start.position };
    const type = this.typeName();
    if (this.acceptWords('METADATA')) {
      const key = this.acceptWords('FROM') ? this.string() : name;
      return { kind: 'metadata', name, type, key, virtual: this.acceptWords('VIRTUAL'), position: start.position };
    }
    if (this.acceptWords('PRIMARY')) throw new SqlUnsupportedError('an inline PRIMARY KEY (declare PRIMARY KEY (…) NOT ENFORCED after the columns)', start.position, this.text);
    if (this.acceptWords('COMMENT')) this.string();
    return { kind: 'physical', name, type, position: start.position };
  }

  private typeName(): TypeName {
    const start = this.peek();
    let name = this.word();
    if (name === 'DOUBLE') this.acceptWords('PRECISION');
    if (name === 'CHARACTER' && this.acceptWords('VARYING')) name = 'VARCHAR';
    const parameters: number[] = [];
    if (this.accept('(')) {
      do parameters.push(Number(this.expectKind('number').text));
      while (this.accept(','));
      this.expect(')');
    }
    if (name === 'TIMESTAMP' && this.acceptWords('WITH', 'LOCAL', 'TIME', 'ZONE')) name = 'TIMESTAMP_LTZ';
    else if (name === 'TIMESTAMP') this.acceptWords('WITHOUT', 'TIME', 'ZONE');
    const notNull = this.acceptWords('NOT', 'NULL');
    if (!notNull) this.acceptWords('NULL');
    return { name, parameters, notNull, position: start.position };
  }

  query(): Query {
    if (this.peek().upper === 'WITH') return this.withQuery();
    return this.noTrailing(this.setOperations(this.intersection(), ['UNION', 'EXCEPT'], () => this.intersection()));
  }

  /** INTERSECT binds before UNION and EXCEPT, as in the SQL standard and Flink. */
  private intersection(): Query {
    return this.setOperations(this.queryTerm(), ['INTERSECT'], () => this.queryTerm());
  }

  /** `first` followed by set operators of one precedence, from the left; a run of one operator is one n-ary operation. */
  private setOperations(first: Query, operators: readonly SetOperation['operator'][], operand: () => Query): Query {
    let result = first;
    let built: SetOperation | undefined;
    for (;;) {
      const word = this.peek();
      if (word.upper === 'MINUS') throw new SqlUnsupportedError('MINUS (write EXCEPT)', word.position, this.text);
      const operator = operators.find((candidate) => candidate === word.upper);
      if (!operator) return result;
      this.next();
      const all = this.acceptWords('ALL');
      if (!all) this.acceptWords('DISTINCT');
      const input = operand();
      built =
        built?.operator === operator && built.all === all
          ? { ...built, inputs: [...built.inputs, input] }
          : { kind: 'setOperation', operator, all, inputs: [result, input], position: word.position };
      result = built;
    }
  }

  /**
   * WITH's common table expressions, each inlined where the query (or a later one) names it, as a
   * subquery under that name: planned where it is read, as a view is.
   */
  private withQuery(): Query {
    this.expectWords('WITH');
    const named = new Map<string, Query>();
    do {
      const start = this.peek();
      const name = this.identifier();
      if (this.peek().text === '(') throw new SqlUnsupportedError(`WITH ${name} (column names) (name the columns in its SELECT instead)`, this.peek().position, this.text);
      if (named.has(name.toLowerCase())) throw new SqlError(`WITH names '${name}' twice`, start.position, this.text);
      this.expectWords('AS');
      this.expect('(');
      const query = inlineNamed(this.query(), named);
      this.expect(')');
      named.set(name.toLowerCase(), query);
    } while (this.accept(','));
    return inlineNamed(this.query(), named);
  }

  /** A query's ORDER BY and LIMIT, if it has them, and nothing Sluice does not run after them. */
  private noTrailing(query: Query): Query {
    const start = this.peek();
    const orderBy = this.orderBy('ORDER BY');
    const limited = this.limit();
    const next = this.peek();
    if (next.upper === 'UNION' || next.upper === 'EXCEPT' || next.upper === 'INTERSECT') {
      throw this.error(`${next.upper} after ORDER BY or LIMIT: put the sorted query in parentheses`, next);
    }
    if (next.upper === 'LIMIT' || next.upper === 'FETCH') throw new SqlUnsupportedError(next.upper, next.position, this.text);
    return orderBy.length === 0 && limited === undefined ? query : { kind: 'sorted', query, orderBy, limit: limited?.limit, offset: limited?.offset ?? 0, position: start.position };
  }

  /**
   * `EXISTS (SELECT … FROM r WHERE r.y = q.x AND …)`, correlated by one equality between a column
   * of the subquery's table and one of the query's, read as the semi join it is:
   * `q.x IN (SELECT r.y FROM r WHERE …)`, as Flink decorrelates it.
   */
  private exists(): Expression {
    const start = this.next();
    this.expect('(');
    const query = this.query();
    this.expect(')');
    const inner = query.kind === 'select' && (query.from.kind === 'table' || query.from.kind === 'subquery') ? query : undefined;
    const innerName = inner && (inner.from.alias ?? (inner.from.kind === 'table' ? inner.from.name : undefined))?.toLowerCase();
    const conditions = conjuncts(inner?.where);
    const correlation = conditions.findIndex(
      (condition) =>
        condition.kind === 'binary' &&
        condition.operator === '=' &&
        condition.left.kind === 'column' &&
        condition.right.kind === 'column' &&
        condition.left.table !== undefined &&
        condition.right.table !== undefined &&
        (condition.left.table.toLowerCase() === innerName) !== (condition.right.table.toLowerCase() === innerName),
    );
    const equality = conditions[correlation];
    if (!inner || !equality || equality.kind !== 'binary' || inner.groupBy.length > 0) {
      throw new SqlUnsupportedError(
        'EXISTS other than over one table correlated by one equality between its column and the query\'s (r.y = q.x, each qualified)',
        start.position,
        this.text,
      );
    }
    const [innerColumn, outerColumn] = equality.left.kind === 'column' && equality.left.table?.toLowerCase() === innerName ? [equality.left, equality.right] : [equality.right, equality.left];
    const where = conjunction(conditions.filter((_, i) => i !== correlation));
    const lookup: Query = { ...inner, items: [{ expression: innerColumn, alias: undefined }], where };
    return { kind: 'in', operand: outerColumn, list: [], query: lookup, negated: false, fromExists: true, position: start.position };
  }

  /** `ORDER BY` and its items, each ASC or DESC, if written; `clause` names where, for NULLS FIRST or LAST, which Sluice does not read yet. */
  private orderBy(clause: string): SortItem[] {
    if (!this.acceptWords('ORDER', 'BY')) return [];
    return this.commaSeparated(() => {
      const expression = this.expression();
      const descending = this.acceptWords('DESC');
      if (!descending) this.acceptWords('ASC');
      if (this.peek().upper === 'NULLS') throw new SqlUnsupportedError(`NULLS FIRST or LAST in ${clause}`, this.peek().position, this.text);
      return { expression, descending };
    });
  }

  /** `LIMIT n` or `FETCH FIRST|NEXT n ROW|ROWS ONLY`: how many rows, a positive whole number. */
  /**
   * `LIMIT n [OFFSET m]` or `[OFFSET m ROWS] FETCH FIRST n ROWS ONLY`: how many rows, and how many
   * skipped before them. An OFFSET without a LIMIT or FETCH is refused, as Flink refuses it on a
   * stream.
   */
  private limit(): { limit: number; offset: number } | undefined {
    const offsetFirst = this.offset();
    const start = this.peek();
    const fetch = start.upper === 'FETCH';
    if (!(fetch ? this.acceptWords('FETCH') : offsetFirst === undefined && this.acceptWords('LIMIT'))) {
      if (offsetFirst !== undefined) throw this.error('OFFSET without FETCH, which Flink does not run on a stream: add FETCH FIRST n ROWS ONLY after it', start);
      return undefined;
    }
    if (fetch && !this.acceptWords('FIRST')) this.expectWords('NEXT');
    const limit = this.rowCount(fetch ? 'FETCH' : 'LIMIT', 1);
    if (fetch) {
      if (!this.acceptWords('ROWS')) this.expectWords('ROW');
      this.expectWords('ONLY');
    }
    return { limit, offset: offsetFirst ?? (fetch ? undefined : this.offset()) ?? 0 };
  }

  /** `OFFSET m [ROW | ROWS]`, if written. */
  private offset(): number | undefined {
    if (!this.acceptWords('OFFSET')) return undefined;
    const offset = this.rowCount('OFFSET', 0);
    if (!this.acceptWords('ROWS')) this.acceptWords('ROW');
    return offset;
  }

  private rowCount(clause: string, least: number): number {
    const count = this.next();
    const rows = Number(count.text);
    if (count.kind !== 'number' || !Number.isInteger(rows) || rows < least) {
      throw new SqlError(`${clause} takes a whole number of rows, at least ${least}, not ${count.text || 'nothing'}`, count.position, this.text);
    }
    return rows;
  }

  private queryTerm(): Query {
    if (this.peek().text === '(') {
      this.expect('(');
      const query = this.query();
      this.expect(')');
      return query;
    }
    return this.select();
  }

  private select(): Select {
    const start = this.peek();
    this.expectWords('SELECT');
    const distinct = this.acceptWords('DISTINCT');
    if (!distinct) this.acceptWords('ALL');
    const items = this.commaSeparated(() => this.selectItem());
    this.expectWords('FROM');
    const from = this.relation();
    const where = this.acceptWords('WHERE') ? this.expression() : undefined;
    const groupBy = this.acceptWords('GROUP', 'BY') ? this.commaSeparated(() => this.expression()) : [];
    const having = this.acceptWords('HAVING') ? this.expression() : undefined;
    const windows = new Map<string, OverClause>();
    if (this.acceptWords('WINDOW')) {
      do {
        const name = this.identifier();
        this.expectWords('AS');
        windows.set(name.toLowerCase(), this.overSpecification(this.peek()));
      } while (this.accept(','));
    }
    const named = (expression: Expression) => withNamedWindows(expression, windows, this.text);
    return { kind: 'select', distinct, items: items.map((item) => ({ ...item, expression: named(item.expression) })), from, where, groupBy, having, position: start.position };
  }

  private selectItem(): SelectItem {
    const expression = this.expression();
    if (this.acceptWords('AS')) return { expression, alias: this.identifier() };
    const next = this.peek();
    if ((next.kind === 'word' && !RESERVED.has(next.upper)) || next.kind === 'quoted') return { expression, alias: this.identifier() };
    return { expression, alias: undefined };
  }

  private relation(): Relation {
    let relation = this.primaryRelation();
    for (;;) {
      const next = this.peek();
      if (next.upper === 'MATCH_RECOGNIZE') throw new SqlUnsupportedError('MATCH_RECOGNIZE', next.position, this.text);
      const join = this.joinKeyword();
      if (!join) return relation;
      const right = this.primaryRelation();
      let condition: Expression | undefined;
      let using: readonly string[] | 'natural' | undefined = join.natural ? 'natural' : undefined;
      if (join.on && this.acceptWords('USING')) {
        this.expect('(');
        using = this.commaSeparated(() => this.identifier());
        this.expect(')');
      } else if (join.on) {
        this.expectWords('ON');
        condition = this.expression();
      }
      relation = { kind: 'join', type: join.type, left: relation, right, condition, ...(using ? { using } : {}), position: next.position };
    }
  }

  /** The words that join the next relation to the ones before: a comma and CROSS JOIN have no ON, nor has a NATURAL JOIN. */
  private joinKeyword(): { type: JoinType; on: boolean; natural: boolean } | undefined {
    if (this.accept(',') || this.acceptWords('CROSS', 'JOIN')) return { type: 'INNER', on: false, natural: false };
    const natural = this.acceptWords('NATURAL');
    if (this.acceptWords('JOIN') || this.acceptWords('INNER', 'JOIN')) return { type: 'INNER', on: !natural, natural };
    for (const type of ['LEFT', 'RIGHT', 'FULL'] as const) {
      if (!this.acceptWords(type)) continue;
      this.acceptWords('OUTER');
      this.expectWords('JOIN');
      return { type, on: !natural, natural };
    }
    if (natural) throw this.error(`expected JOIN after NATURAL, found ${this.describe(this.peek())}`);
    return undefined;
  }

  private primaryRelation(): Relation {
    const start = this.peek();
    if (this.accept('(')) {
      const query = this.query();
      this.expect(')');
      return { kind: 'subquery', query, alias: this.alias(), position: start.position };
    }
    if (this.acceptWords('LATERAL')) throw new SqlUnsupportedError('LATERAL TABLE (table functions)', start.position, this.text);
    if (this.acceptWords('TABLE')) {
      this.expect('(');
      const relation = this.windowFunction();
      this.expect(')');
      return { ...relation, alias: this.alias() };
    }
    const name = this.qualifiedName();
    if (this.acceptWords('FOR')) {
      this.expectWords('SYSTEM_TIME', 'AS', 'OF');
      const asOf = this.expression();
      return { kind: 'table', name, asOf, alias: this.alias(), position: start.position };
    }
    return { kind: 'table', name, alias: this.alias(), position: start.position };
  }

  private windowFunction(): Extract<Relation, { kind: 'window' }> {
    const start = this.peek();
    const name = this.word();
    if (name !== 'TUMBLE' && name !== 'HOP' && name !== 'CUMULATE' && name !== 'SESSION') {
      throw this.error(`expected a window function (TUMBLE, HOP, CUMULATE or SESSION), found ${name}`, start);
    }
    this.expect('(');
    const named = () => {
      const token = this.peek();
      if (this.tokens[this.at + 1]?.text === '=' && this.tokens[this.at + 2]?.text === '>') throw new SqlUnsupportedError('named window arguments (name => value)', token.position, this.text);
    };
    named();
    const inputStart = this.peek();
    this.expectWords('TABLE');
    const input: Relation = { kind: 'table', name: this.qualifiedName(), alias: undefined, position: inputStart.position };
    const partitionBy = name === 'SESSION' && this.acceptWords('PARTITION', 'BY') ? this.partitionColumns() : [];
    this.expect(',');
    this.expectWords('DESCRIPTOR');
    this.expect('(');
    const timeColumn = this.identifier();
    this.expect(')');
    const intervals: number[] = [];
    while (this.accept(',')) {
      const expression = this.expression();
      if (expression.kind !== 'interval') throw this.error('a window function takes INTERVAL literals for its size, slide, step and offset', undefined, expression.position);
      intervals.push(expression.millis);
    }
    const wanted = name === 'TUMBLE' || name === 'SESSION' ? 1 : 2;
    const optional = name === 'SESSION' ? 0 : 1;
    if (intervals.length < wanted || intervals.length > wanted + optional) {
      const takes = { TUMBLE: 'a size and an optional offset', HOP: 'a slide, a size and an optional offset', CUMULATE: 'a step, a size and an optional offset', SESSION: 'a gap' }[name];
      throw this.error(`${name} takes ${takes}`, start);
    }
    this.expect(')');
    return { kind: 'window', function: name, input, partitionBy, timeColumn, intervals, alias: undefined, position: start.position };
  }

  /** PARTITION BY's columns, bare or in parentheses, up to the DESCRIPTOR that follows them. */
  private partitionColumns(): string[] {
    if (this.accept('(')) {
      const columns = this.commaSeparated(() => this.identifier());
      this.expect(')');
      return columns;
    }
    const columns = [this.identifier()];
    while (this.peek().text === ',' && this.tokens[this.at + 1]?.upper !== 'DESCRIPTOR') {
      this.next();
      columns.push(this.identifier());
    }
    return columns;
  }

  private alias(): string | undefined {
    if (this.acceptWords('AS')) return this.identifier();
    const next = this.peek();
    return (next.kind === 'word' && !RESERVED.has(next.upper)) || next.kind === 'quoted' ? this.identifier() : undefined;
  }

  expression(): Expression {
    return this.or();
  }

  private or(): Expression {
    let left = this.and();
    while (this.peek().upper === 'OR') {
      const position = this.next().position;
      left = { kind: 'binary', operator: 'OR', left, right: this.and(), position };
    }
    return left;
  }

  private and(): Expression {
    let left = this.not();
    while (this.peek().upper === 'AND') {
      const position = this.next().position;
      left = { kind: 'binary', operator: 'AND', left, right: this.not(), position };
    }
    return left;
  }

  private not(): Expression {
    const start = this.peek();
    if (this.acceptWords('NOT')) return { kind: 'unary', operator: 'NOT', operand: this.not(), position: start.position };
    return this.comparison();
  }

  private comparison(): Expression {
    let left = this.additive();
    for (;;) {
      const next = this.postfix(left);
      if (next === left) return left;
      left = next;
    }
  }

  /** A comparison, IS, BETWEEN, IN or LIKE after `left`, or `left` itself when none follows. */
  private postfix(left: Expression): Expression {
    const start = this.peek();
    if (['=', '<>', '!=', '<', '<=', '>', '>='].includes(start.text) && start.kind === 'symbol') {
      this.next();
      return { kind: 'binary', operator: start.text === '!=' ? '<>' : start.text, left, right: this.additive(), position: start.position };
    }
    if (this.acceptWords('IS')) {
      const negated = this.acceptWords('NOT');
      if (this.acceptWords('NULL')) return { kind: 'isNull', operand: left, negated, position: start.position };
      for (const truth of ['TRUE', 'FALSE'] as const) {
        if (this.acceptWords(truth)) {
          const literal: Expression = { kind: 'literal', value: truth === 'TRUE', text: truth, position: start.position };
          const test: Expression = { kind: 'call', name: 'IS_TRUTH', args: [left, literal], distinct: false, filter: undefined, star: false, over: undefined, position: start.position };
          return negated ? { kind: 'unary', operator: 'NOT', operand: test, position: start.position } : test;
        }
      }
      throw this.error('expected NULL, TRUE or FALSE after IS');
    }
    const negated = this.peek().upper === 'NOT' && ['BETWEEN', 'IN', 'LIKE', 'SIMILAR'].includes(this.tokens[this.at + 1]?.upper ?? '');
    if (negated) this.next();
    if (this.acceptWords('BETWEEN')) {
      this.acceptWords('ASYMMETRIC');
      const low = this.additive();
      this.expectWords('AND');
      return { kind: 'between', operand: left, low, high: this.additive(), negated, position: start.position };
    }
    if (this.acceptWords('IN')) {
      this.expect('(');
      if (this.peek().upper === 'SELECT' || this.peek().upper === 'WITH') {
        const query = this.query();
        this.expect(')');
        return { kind: 'in', operand: left, list: [], query, negated, position: start.position };
      }
      const list = this.commaSeparated(() => this.expression());
      this.expect(')');
      return { kind: 'in', operand: left, list, negated, position: start.position };
    }
    if (this.acceptWords('LIKE')) return { kind: 'like', operand: left, pattern: this.additive(), negated, position: start.position };
    if (this.peek().upper === 'SIMILAR') throw new SqlUnsupportedError('SIMILAR TO', this.peek().position, this.text);
    return left;
  }

  private additive(): Expression {
    let left = this.multiplicative();
    for (;;) {
      const token = this.peek();
      if (token.kind !== 'symbol' || !['+', '-', '||'].includes(token.text)) return left;
      this.next();
      left = { kind: 'binary', operator: token.text, left, right: this.multiplicative(), position: token.position };
    }
  }

  private multiplicative(): Expression {
    let left = this.unary();
    for (;;) {
      const token = this.peek();
      if (token.kind !== 'symbol' || !['*', '/', '%'].includes(token.text)) return left;
      this.next();
      left = { kind: 'binary', operator: token.text, left, right: this.unary(), position: token.position };
    }
  }

  private unary(): Expression {
    const start = this.peek();
    if (this.accept('-')) return { kind: 'unary', operator: '-', operand: this.unary(), position: start.position };
    if (this.accept('+')) return this.unary();
    return this.primary();
  }

  private primary(): Expression {
    const token = this.peek();
    const position = token.position;
    if (token.kind === 'number') {
      this.next();
      return { kind: 'literal', value: Number(token.text), text: token.text, position };
    }
    if (token.kind === 'string') {
      this.next();
      return { kind: 'literal', value: token.text, text: token.text, position };
    }
    if (this.accept('(')) {
      if (this.peek().upper === 'SELECT') throw new SqlUnsupportedError('a scalar subquery', this.peek().position, this.text);
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (token.kind === 'symbol' && token.text === '*') {
      this.next();
      return { kind: 'star', table: undefined, position };
    }
    if (token.kind !== 'word' && token.kind !== 'quoted') throw this.error(`expected an expression, found ${this.describe(token)}`);
    if (token.kind === 'word') {
      switch (token.upper) {
        case 'EXISTS':
          return this.exists();
        case 'NULL':
        case 'TRUE':
        case 'FALSE':
          this.next();
          return { kind: 'literal', value: token.upper === 'NULL' ? null : token.upper === 'TRUE', text: token.upper, position };
        case 'INTERVAL':
          this.next();
          return this.interval(position);
        case 'CASE':
          this.next();
          return this.caseExpression(position);
        case 'CAST':
        case 'TRY_CAST': {
          this.next();
          this.expect('(');
          const operand = this.expression();
          this.expectWords('AS');
          const type = this.typeName();
          this.expect(')');
          return { kind: 'cast', operand, type, safe: token.upper === 'TRY_CAST', position };
        }
        case 'TIMESTAMP':
        case 'DATE':
          if (this.tokens[this.at + 1]?.kind === 'string') {
            this.next();
            return { kind: 'typedLiteral', type: token.upper, text: this.string(), position };
          }
          break;
        case 'TIME':
          if (this.tokens[this.at + 1]?.kind === 'string') throw new SqlUnsupportedError(`${token.upper} literals`, position, this.text);
          break;
        default:
      }
    }
    // LEFT and RIGHT are keywords of joins, and functions before a parenthesis.
    if ((token.upper === 'LEFT' || token.upper === 'RIGHT') && this.tokens[this.at + 1]?.text === '(') return this.call(this.next().upper, position);
    const name = this.identifier();
    if (this.peek().text === '(') return this.call(name.toUpperCase(), position);
    if (this.accept('.')) {
      if (this.accept('*')) return { kind: 'star', table: name, position };
      return { kind: 'column', table: name, name: this.identifier(), position };
    }
    if (token.kind === 'word' && ['CURRENT_TIMESTAMP', 'LOCALTIMESTAMP', 'CURRENT_DATE', 'CURRENT_TIME'].includes(token.upper)) {
      throw new SqlUnsupportedError(`${token.upper} (processing time in a query)`, position, this.text);
    }
    return { kind: 'column', table: undefined, name, position };
  }

  private call(name: string, position: SqlPosition): Expression {
    this.expect('(');
    let distinct = false;
    let star = false;
    const args: Expression[] = [];
    if (['SUBSTRING', 'TRIM', 'POSITION', 'EXTRACT', 'TIMESTAMPADD', 'TIMESTAMPDIFF'].includes(name)) return this.keywordCall(name, position);
    if (this.accept('*')) star = true;
    else if (this.peek().text !== ')') {
      distinct = this.acceptWords('DISTINCT');
      if (!distinct) this.acceptWords('ALL');
      args.push(...this.commaSeparated(() => this.expression()));
    }
    // FLOOR(t TO unit) and CEIL(t TO unit) round a time to a unit, passed on as its name.
    if (['FLOOR', 'CEIL', 'CEILING'].includes(name) && args.length === 1 && this.peek().upper === 'TO') {
      this.next();
      const unitToken = this.peek();
      const unit = this.word();
      if (!ROUNDING_UNITS.includes(unit)) throw this.error(`${name} … TO takes ${ROUNDING_UNITS.join(', ')}, not ${unit}`, unitToken);
      args.push({ kind: 'literal', value: unit, text: unit, position: unitToken.position });
    }
    this.expect(')');
    let filter: Expression | undefined;
    if (this.acceptWords('FILTER')) {
      this.expect('(');
      this.expectWords('WHERE');
      filter = this.expression();
      this.expect(')');
    }
    const over = this.peek().upper === 'OVER' ? this.over() : undefined;
    if (this.peek().upper === 'WITHIN') throw new SqlUnsupportedError('WITHIN GROUP', this.peek().position, this.text);
    return { kind: 'call', name, args, distinct, filter, star, over, position };
  }

  /** OVER (PARTITION BY … ORDER BY … [ASC|DESC], … [frame]), or OVER a window the SELECT's WINDOW clause names. */
  private over(): OverClause {
    const start = this.peek();
    this.expectWords('OVER');
    if (this.peek().text !== '(') return { partitionBy: [], orderBy: [], frame: undefined, windowName: this.identifier(), position: start.position };
    return this.overSpecification(start);
  }

  /** (PARTITION BY … ORDER BY … [frame]), as OVER and a WINDOW clause write it. */
  private overSpecification(start: Token): OverClause {
    this.expect('(');
    const partitionBy = this.acceptWords('PARTITION', 'BY') ? this.commaSeparated(() => this.expression()) : [];
    const orderBy = this.orderBy('OVER');
    const frame = ['ROWS', 'RANGE'].includes(this.peek().upper) ? this.overFrame() : undefined;
    this.expect(')');
    return { partitionBy, orderBy, frame, position: start.position };
  }

  /** ROWS or RANGE, BETWEEN a start AND CURRENT ROW or the start alone: UNBOUNDED, n rows or an interval PRECEDING, or CURRENT ROW. */
  private overFrame(): OverFrame {
    const start = this.peek();
    const unit = this.word() as OverFrame['unit'];
    const between = this.acceptWords('BETWEEN');
    let preceding: number | undefined;
    if (this.acceptWords('UNBOUNDED')) {
      this.expectWords('PRECEDING');
      preceding = undefined;
    } else if (this.acceptWords('CURRENT', 'ROW')) {
      preceding = 0;
    } else {
      const amount = this.peek();
      const interval = unit === 'RANGE' && this.acceptWords('INTERVAL') ? this.interval(amount.position) : undefined;
      preceding = unit === 'ROWS' ? Number(this.expectKind('number').text) : interval?.kind === 'interval' ? interval.millis : undefined;
      if (preceding === undefined) throw this.error(`expected a RANGE frame's start as INTERVAL '1' HOUR PRECEDING, found ${this.describe(amount)}`, amount);
      if (this.peek().upper === 'FOLLOWING') throw this.error('an OVER frame on a stream ends at the current row: FOLLOWING windows are not supported, in Flink either');
      this.expectWords('PRECEDING');
    }
    if (between) {
      this.expectWords('AND');
      if (!this.acceptWords('CURRENT', 'ROW')) throw this.error('an OVER frame on a stream ends at the current row: FOLLOWING windows are not supported, in Flink either');
    }
    return { unit, preceding, position: start.position };
  }

  /**
   * SUBSTRING(s FROM a [FOR b]), TRIM([BOTH|LEADING|TRAILING] [c] FROM s), POSITION(a IN b),
   * EXTRACT(unit FROM t): Flink's keyword forms beside the comma ones; and TIMESTAMPADD and
   * TIMESTAMPDIFF, whose first argument is a unit, passed on as its name.
   */
  private keywordCall(name: string, position: SqlPosition): Expression {
    const call = (args: Expression[], callee = name): Expression => ({ kind: 'call', name: callee, args, distinct: false, filter: undefined, star: false, over: undefined, position });
    const literal = (text: string): Expression => ({ kind: 'literal', value: text, text, position });
    if (name === 'EXTRACT') {
      const unit = this.word();
      const fn = EXTRACT_UNITS[unit];
      if (fn === undefined) throw this.error(`EXTRACT takes ${Object.keys(EXTRACT_UNITS).join(', ')}, not ${unit}`);
      this.expectWords('FROM');
      const operand = this.expression();
      this.expect(')');
      return call([operand], fn);
    }
    if (name === 'TIMESTAMPADD' || name === 'TIMESTAMPDIFF') {
      const unitToken = this.peek();
      const unit = this.word();
      if (!(unit in CALENDAR_UNITS)) throw this.error(`${name} takes ${Object.keys(CALENDAR_UNITS).join(', ')}, not ${unit}`, unitToken);
      this.expect(',');
      const args = [literal(unit), ...this.commaSeparated(() => this.expression())];
      this.expect(')');
      return call(args);
    }
    if (name === 'TRIM') {
      const side = ['BOTH', 'LEADING', 'TRAILING'].find((s) => this.acceptWords(s)) ?? 'BOTH';
      let characters: Expression = literal(' ');
      if (!this.acceptWords('FROM')) {
        const first = this.expression();
        if (!this.acceptWords('FROM')) {
          this.expect(')');
          return call([literal(side), characters, first]);
        }
        characters = first;
      }
      const operand = this.expression();
      this.expect(')');
      return call([literal(side), characters, operand]);
    }
    const first = this.additive();
    if (name === 'POSITION') {
      this.expectWords('IN');
      const within = this.expression();
      this.expect(')');
      return call([first, within]);
    }
    const args = [first];
    if (this.acceptWords('FROM') || this.accept(',')) args.push(this.expression());
    if (this.acceptWords('FOR') || this.accept(',')) args.push(this.expression());
    this.expect(')');
    return call(args);
  }

  private caseExpression(position: SqlPosition): Expression {
    const operand = this.peek().upper === 'WHEN' ? undefined : this.expression();
    const branches: { when: Expression; then: Expression }[] = [];
    while (this.acceptWords('WHEN')) {
      const when = this.expression();
      this.expectWords('THEN');
      branches.push({ when, then: this.expression() });
    }
    if (branches.length === 0) throw this.error('expected WHEN in a CASE expression');
    const otherwise = this.acceptWords('ELSE') ? this.expression() : undefined;
    this.expectWords('END');
    return { kind: 'case', operand, branches, otherwise, position };
  }

  private interval(position: SqlPosition): Expression {
    const sign = this.accept('-') ? -1 : 1;
    const token = this.next();
    if (token.kind !== 'string' && token.kind !== 'number') throw this.error(`expected the interval's amount in quotes, as INTERVAL '10' SECOND`, token);
    const unit = this.word().replace(/S$/, '');
    const millis = INTERVAL_UNITS[unit];
    const months = MONTH_INTERVAL_UNITS[unit];
    if (millis === undefined && months === undefined) {
      throw this.error(`unknown interval unit ${unit}: use SECOND, MINUTE, HOUR, DAY, MONTH or YEAR (a fraction of a second as INTERVAL '0.5' SECOND)`, token);
    }
    // The leading field's precision, 2 digits unless given, as SQL and Flink bound it.
    let digits = 2;
    if (this.accept('(')) {
      digits = Number(this.expectKind('number').text);
      if (this.accept(',')) this.expectKind('number');
      this.expect(')');
    }
    if (this.acceptWords('TO')) throw new SqlUnsupportedError('compound intervals (… TO …)', position, this.text);
    const amount = Number(token.text);
    const leading = token.text.replace(/^[+-]/, '').split('.')[0]?.replace(/^0+(?=\d)/, '') ?? '';
    if (leading.length > digits) throw this.error(`interval field value ${token.text} exceeds precision of ${unit}(${digits}) field: write ${unit}(${leading.length})`, token);
    if (!Number.isFinite(amount)) throw this.error(`the interval's amount ${token.text} is not a number`, token);
    if (months === undefined) return { kind: 'interval', millis: sign * amount * (millis as number), position };
    if (!Number.isInteger(amount)) throw this.error(`a ${unit} interval counts whole ${unit.toLowerCase()}s, not ${token.text}`, token);
    return { kind: 'monthInterval', months: sign * amount * months, position };
  }

  private commaSeparated<T>(item: () => T): T[] {
    const items = [item()];
    while (this.accept(',')) items.push(item());
    return items;
  }

  private qualifiedName(): string {
    let name = this.identifier();
    while (this.accept('.')) name = this.identifier();
    return name;
  }

  private identifier(): string {
    const token = this.peek();
    if (token.kind === 'quoted') return this.next().text;
    if (token.kind !== 'word' || RESERVED.has(token.upper)) throw this.error(`expected a name, found ${this.describe(token)}`);
    return this.next().text;
  }

  private word(): string {
    const token = this.peek();
    if (token.kind !== 'word') throw this.error(`expected a word, found ${this.describe(token)}`);
    return this.next().upper;
  }

  private string(): string {
    return this.expectKind('string').text;
  }

  private expectKind(kind: Token['kind']): Token {
    const token = this.peek();
    if (token.kind !== kind) throw this.error(`expected ${kind === 'string' ? "a '…' string" : `a ${kind}`}, found ${this.describe(token)}`);
    return this.next();
  }

  private peek(): Token {
    return this.tokens[this.at] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.at++;
    return token;
  }

  private accept(symbol: string): boolean {
    const token = this.peek();
    if (token.kind !== 'symbol' || token.text !== symbol) return false;
    this.at++;
    return true;
  }

  private expect(symbol: string): void {
    if (!this.accept(symbol)) throw this.error(`expected "${symbol}", found ${this.describe(this.peek())}`);
  }

  /** Consumes the words in sequence, or none of them. */
  private acceptWords(...words: string[]): boolean {
    if (!words.every((word, i) => this.tokens[this.at + i]?.kind === 'word' && this.tokens[this.at + i]?.upper === word)) return false;
    this.at += words.length;
    return true;
  }

  private expectWords(...words: string[]): void {
    if (!this.acceptWords(...words)) throw this.error(`expected ${words.join(' ')}, found ${this.describe(this.peek())}`);
  }

  private describe(token: Token): string {
    return token.kind === 'end' ? 'the end of the statement' : token.kind === 'string' ? `'${token.text}'` : `"${token.text}"`;
  }

  private error(reason: string, token: Token = this.peek(), position: SqlPosition = token.position): SqlError {
    return new SqlError(reason, position, this.text);
  }
}

/** `query` with each table it names that `named` holds replaced by that query, as a subquery under the table's name or alias. */
function inlineNamed(query: Query, named: ReadonlyMap<string, Query>): Query {
  if (query.kind === 'setOperation') return { ...query, inputs: query.inputs.map((input) => inlineNamed(input, named)) };
  if (query.kind === 'sorted') return { ...query, query: inlineNamed(query.query, named) };
  return { ...query, from: inlineRelation(query.from, named) };
}

function inlineRelation(relation: Relation, named: ReadonlyMap<string, Query>): Relation {
  switch (relation.kind) {
    case 'table': {
      const query = named.get(relation.name.toLowerCase());
      return query ? { kind: 'subquery', query, alias: relation.alias ?? relation.name, position: relation.position } : relation;
    }
    case 'subquery':
      return { ...relation, query: inlineNamed(relation.query, named) };
    case 'window':
      return { ...relation, input: inlineRelation(relation.input, named) };
    default:
      return { ...relation, left: inlineRelation(relation.left, named), right: inlineRelation(relation.right, named) };
  }
}

/** `expression` with each OVER of a named window given that window's definition. */
function withNamedWindows(expression: Expression, windows: ReadonlyMap<string, OverClause>, text: string): Expression {
  return rewriteExpression(expression, (inner) => {
    const name = inner.kind === 'call' ? inner.over?.windowName : undefined;
    if (inner.kind !== 'call' || name === undefined) return undefined;
    const over = windows.get(name.toLowerCase());
    if (!over) throw new SqlError(`OVER ${name} names no window: define it in the SELECT's WINDOW clause, as WINDOW ${name} AS (PARTITION BY … ORDER BY …)`, inner.over?.position, text);
    return { ...inner, over };
  });
}
