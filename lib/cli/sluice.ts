import { parseArgs, type ParseArgsConfig } from 'node:util';
import { describePlan, formatPlan } from '../plan/explain.js';
import { planPipeline, PipelineValidationError } from '../plan/planner.js';
import { configFromEnvironment, PipelineRuntime } from '../runtime/runtime.js';
import { formatStatus, pipelineStatus } from '../runtime/status.js';
import { loadPipeline } from './load-pipeline.js';

type Output = (text: string) => void;
type Parsed = { values: Record<string, string | boolean | undefined>; positionals: string[] };

interface Command {
  readonly summary: string;
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  run(file: string, values: Parsed['values'], out: Output): Promise<void>;
}

/** The deployed (or offline) pipeline's runtime, from the same environment variables its functions read. */
async function withRuntime<T>(file: string, use: (runtime: PipelineRuntime) => Promise<T>): Promise<T> {
  const runtime = new PipelineRuntime(await loadPipeline(file), configFromEnvironment());
  try {
    return await use(runtime);
  } finally {
    await runtime.close();
  }
}

const ENVIRONMENT_HELP = `Environment (as the pipeline's functions read it):
  SLUICE_STATE_TABLE        the pipeline's DynamoDB table
  SLUICE_SNAPSHOT_BUCKET    the pipeline's S3 snapshot bucket
  KAFKA_BROKERS             bootstrap brokers, host:port,host:port
  SLUICE_DYNAMODB_ENDPOINT, SLUICE_S3_ENDPOINT   emulator endpoints (offline mode)
`;

const COMMANDS: Record<string, Command> = {
  explain: {
    summary: 'print the stages, operators, topics and state of a pipeline',
    usage: `Usage: sluice explain <pipeline-file> [--json]

Compiles the pipeline (the file's default export) into stages and prints them:
each stage's input, its operators with their state, and what it writes.

Options:
  --json   print the plan as JSON
  --help   show this help
`,
    options: { json: { type: 'boolean' } },
    async run(file, values, out) {
      const plan = planPipeline(await loadPipeline(file));
      out(values.json ? `${JSON.stringify(describePlan(plan), null, 2)}\n` : formatPlan(plan));
    },
  },
  status: {
    summary: 'show checkpoints, and per shard offsets, lag and pending or lost transactions',
    usage: `Usage: sluice status <pipeline-file> [--json]

Reads the pipeline's state table and brokers: the latest triggered, completed and
committed checkpoints, and for every shard its offset, its lag behind the log, the
checkpoint it acknowledged, and its pending transactions with their state at the broker.

Options:
  --json   print the status as JSON
  --help   show this help

${ENVIRONMENT_HELP}`,
    options: { json: { type: 'boolean' } },
    async run(file, values, out) {
      const status = await withRuntime(file, (runtime) => pipelineStatus(runtime));
      out(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    },
  },
  savepoint: {
    summary: 'write a named savepoint of the latest committed checkpoint',
    usage: `Usage: sluice savepoint <pipeline-file> --name <name>

Writes savepoints/<name>/manifest.json in the snapshot bucket: the latest committed
checkpoint with each shard's state merged into one object. Names are never reused.

Options:
  --name   the savepoint's name: letters, digits, '.', '_' and '-'
  --help   show this help

${ENVIRONMENT_HELP}`,
    options: { name: { type: 'string' } },
    async run(file, values, out) {
      const name = values.name;
      if (typeof name !== 'string') throw new UsageError('give the savepoint a --name');
      const { checkpoint, key } = await withRuntime(file, (runtime) => runtime.savepoint(name));
      out(`Savepoint ${name} written from checkpoint ${checkpoint} (${key})\n`);
    },
  },
  restore: {
    summary: 'restore a checkpoint or savepoint into a stopped pipeline, rescaling if needed',
    usage: `Usage: sluice restore <pipeline-file> (--checkpoint <N> | --savepoint <name>)

Stop the pipeline's triggers first. Replaces the pipeline's keyed state with the
snapshot's, moving keys to the shards their records now reach (the source may have more or
fewer partitions, or be another topic), resets offsets and aborts transactions written after
the snapshot. Start the triggers again afterwards.

Options:
  --checkpoint   a checkpoint number (sluice status shows the latest committed)
  --savepoint    a savepoint name
  --help         show this help

${ENVIRONMENT_HELP}`,
    options: { checkpoint: { type: 'string' }, savepoint: { type: 'string' } },
    async run(file, values, out) {
      const { checkpoint, savepoint } = values;
      if ((checkpoint === undefined) === (savepoint === undefined)) throw new UsageError('give either --checkpoint or --savepoint');
      if (typeof checkpoint === 'string' && !/^\d+$/.test(checkpoint)) throw new UsageError(`--checkpoint must be a number, not ${checkpoint}`);
      const source = typeof savepoint === 'string' ? { savepoint } : { checkpoint: Number(checkpoint) };
      const report = await withRuntime(file, (runtime) => runtime.restore(source));
      out(
        `Restored ${typeof savepoint === 'string' ? `savepoint ${savepoint}` : `checkpoint ${String(checkpoint)}`} into ` +
          `${report.shards} shards: ${report.keys} keys (${report.keysDeleted} deleted first), ${report.transactionsCommitted} ` +
          `transactions committed, ${report.transactionsAborted} aborted. It is checkpoint ${report.checkpoint} now.\n`,
      );
    },
  },
};

class UsageError extends Error {}

const USAGE = `Usage: sluice <command> <pipeline-file> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join('\n')}

Run a command with --help for its options.
`;

/** Exit codes: 0 done, 1 the command failed (invalid pipeline, unreachable service, ...), 2 the command line is wrong. */
export async function main(argv: readonly string[], out: Output, err: Output): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? err : out)(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    err(`sluice: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: [...rest], allowPositionals: true, options: { ...command.options, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    err(`sluice ${name}: ${error instanceof Error ? error.message : String(error)}\n\n${command.usage}`);
    return 2;
  }
  if (parsed.values.help) {
    out(command.usage);
    return 0;
  }
  const [file, extra] = parsed.positionals;
  if (file === undefined || extra !== undefined) {
    err(`sluice ${name}: give exactly one pipeline file\n\n${command.usage}`);
    return 2;
  }
  try {
    await command.run(file, parsed.values, out);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err(`sluice ${name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    const kind = error instanceof PipelineValidationError ? 'invalid pipeline' : 'error';
    err(`sluice ${name}: ${kind}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
