// How bench/run.ts and the processes it starts talk: a JSON argument in, one RESULT line of
// JSON out (the rest of their output is for people).
const RESULT_PREFIX = 'RESULT ';

export function readJsonArgument(usage: string): unknown {
  const text = process.argv[2];
  if (!text) throw new Error(`usage: ${usage}`);
  return JSON.parse(text);
}

export function printResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** The result a process printed, or undefined when it printed none. */
export function parseResult(printed: string): unknown {
  const line = printed.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  return line === undefined ? undefined : JSON.parse(line.slice(RESULT_PREFIX.length));
}
