// Flink's group window functions, the older form of window aggregation: GROUP BY
// TUMBLE(ts, size), HOP(ts, slide, size) or SESSION(ts, gap), with TUMBLE_START, …_END and
// …_ROWTIME in the SELECT list. Each query in that form is the same query over the window
// table function, which is how Sluice plans it: the same windows, the same results.
import { rewriteExpression, type Expression, type Relation, type Select } from './ast.js';
import { SqlError, SqlUnsupportedError } from './errors.js';
import { canonical } from './expressions.js';

type Call = Extract<Expression, { kind: 'call' }>;
type WindowFunction = 'TUMBLE' | 'HOP' | 'SESSION';

const GROUP_WINDOWS: readonly WindowFunction[] = ['TUMBLE', 'HOP', 'SESSION'];
const INTERVALS: Record<WindowFunction, number> = { TUMBLE: 1, HOP: 2, SESSION: 1 };
const AUXILIARY: Record<string, string> = { START: 'window_start', END: 'window_end', ROWTIME: 'window_time' };

const isGroupWindow = (expression: Expression): expression is Call => expression.kind === 'call' && (GROUP_WINDOWS as readonly string[]).includes(expression.name);

/** The query over the window table function when it groups by a group window function; otherwise the query itself. */
export function withWindowTableFunction(select: Select, text: string): Select {
  const windows = select.groupBy.filter(isGroupWindow);
  if (windows.length === 0) return select;
  const [window] = windows as [Call, ...Call[]];
  if (windows.length > 1) throw new SqlError('a query groups by one group window function at most', window.position, text);
  const name = window.name as WindowFunction;
  const [time, ...rest] = window.args;
  const intervals = rest.map((arg) => (arg.kind === 'interval' ? arg.millis : NaN));
  if (time?.kind !== 'column' || intervals.length !== INTERVALS[name] || intervals.some(Number.isNaN)) {
    const takes = { TUMBLE: 'a time attribute and a size', HOP: 'a time attribute, a slide and a size', SESSION: 'a time attribute and a gap' }[name];
    throw new SqlError(`${name} in GROUP BY takes ${takes}, as in ${name}(ts, INTERVAL '10' SECOND)`, window.position, text);
  }
  if (select.from.kind === 'window') throw new SqlError(`${name} in GROUP BY over a window table function: choose one of them`, window.position, text);
  const keys = select.groupBy.filter((e) => e !== window);
  const partitionBy = name === 'SESSION' ? keys.map((key) => (key.kind === 'column' ? key.name : sessionKeyError(key, text))) : [];
  const from: Relation = {
    kind: 'window',
    function: name,
    input: { ...select.from, alias: undefined },
    partitionBy,
    timeColumn: time.name,
    intervals,
    alias: select.from.alias ?? (select.from.kind === 'table' ? select.from.name : undefined),
    position: window.position,
  };
  const auxiliary = (expression: Expression) => auxiliaryColumn(expression, window, text);
  const boundary = (column: string): Expression => ({ kind: 'column', table: undefined, name: column, position: window.position });
  return {
    ...select,
    from,
    items: select.items.map((item) => ({ ...item, expression: rewriteExpression(item.expression, auxiliary) })),
    having: select.having && rewriteExpression(select.having, auxiliary),
    groupBy: [...keys, boundary('window_start'), boundary('window_end')],
  };
}

function sessionKeyError(key: Expression, text: string): never {
  throw new SqlUnsupportedError('SESSION in GROUP BY beside a key that is not a column', key.position, text);
}

/** TUMBLE_START(ts, …) and its kin as the window table function's column; undefined for any other expression. */
function auxiliaryColumn(expression: Expression, window: Call, text: string): Expression | undefined {
  if (expression.kind !== 'call') return undefined;
  const [prefix, suffix] = [expression.name.slice(0, expression.name.lastIndexOf('_')), expression.name.slice(expression.name.lastIndexOf('_') + 1)];
  const column = AUXILIARY[suffix];
  if (!column || !(GROUP_WINDOWS as readonly string[]).includes(prefix)) return undefined;
  if (prefix !== window.name || argumentsOf(expression) !== argumentsOf(window)) {
    throw new SqlError(`${expression.name} names a window the query does not group by: give it GROUP BY's ${window.name} arguments`, expression.position, text);
  }
  return { kind: 'column', table: undefined, name: column, position: expression.position };
}

/** A window call's arguments as compileExpression finds a grouped column: qualified or not, the same. */
function argumentsOf(call: Call): string {
  return call.args.map((arg) => canonical(arg.kind === 'column' ? { ...arg, table: undefined } : arg)).join(',');
}

