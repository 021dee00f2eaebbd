import { parseArgs } from 'node:util';
import { describePlan, formatPlan } from '../plan/explain.js';
import { planPipeline, PipelineValidationError } from '../plan/planner.js';
import { loadPipeline } from './load-pipeline.js';

const USAGE = `Usage: sluice <command> [options]

Commands:
  explain <pipeline-file> [--json]   print the stages, operators, topics and state of a pipeline

Run a command with --help for its options.
`;

const EXPLAIN_USAGE = `Usage: sluice explain <pipeline-file> [--json]

Compiles the pipeline (the file's default export) into stages and prints them:
each stage's input, its operators with their state, and what it writes.

Options:
  --json   print the plan as JSON
  --help   show this help
`;

/** Exit codes: 0 done, 1 the pipeline is invalid or failed to load, 2 the command line is wrong. */
export async function main(argv: readonly string[], out: (text: string) => void, err: (text: string) => void): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    (command === undefined ? err : out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'explain') {
    err(`sluice: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    err(`sluice explain: ${error instanceof Error ? error.message : String(error)}\n\n${EXPLAIN_USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    out(EXPLAIN_USAGE);
    return 0;
  }
  const [file, extra] = parsed.positionals;
  if (file === undefined || extra !== undefined) {
    err(`sluice explain: give exactly one pipeline file\n\n${EXPLAIN_USAGE}`);
    return 2;
  }
  try {
    const plan = planPipeline(await loadPipeline(file));
    out(parsed.values.json ? `${JSON.stringify(describePlan(plan), null, 2)}\n` : formatPlan(plan));
    return 0;
  } catch (error) {
    const kind = error instanceof PipelineValidationError ? 'invalid pipeline' : 'error';
    err(`sluice explain: ${kind}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
