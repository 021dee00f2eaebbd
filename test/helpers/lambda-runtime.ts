// Lambda's own runtime for the packaged functions: AWS's Runtime Interface Emulator (the Go module,
// built with `go install`) runs AWS's Node.js Runtime Interface Client (the npm package
// aws-lambda-ric, built from source: cmake, autoconf, automake, libtool, g++) as a container
// image would, with one function's unzipped package as its task root. The emulator starts the
// runtime at the first invocation (INIT), enforces the timeout by killing it, and starts it again
// at the next invocation, as Lambda does.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { buildOnce, sluiceCacheDir } from '../../lib/offline/cache-folder.js';
import { runTool } from '../../lib/offline/java-service.js';

const RIE_MODULE = 'github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie';
const RIE_VERSION = 'v0.0.0-20261030222936-bef5c4ba774d';
const RIC_VERSION = '4.0.2';

/** The emulator's binary and the runtime client's entry point, built once per machine into Sluice's cache. */
export function lambdaRuntimeTools(): { rie: string; ric: string } {
  const folder = buildOnce(join(sluiceCacheDir(), `lambda-runtime-${RIE_VERSION.slice(-12)}-ric-${RIC_VERSION}`), (staging) => {
    runTool('go', ['install', `${RIE_MODULE}@${RIE_VERSION}`], 'build the Lambda Runtime Interface Emulator (is Go installed?)', { ...process.env, GOBIN: join(staging, 'bin') });
    runTool(
      'npm',
      ['install', '--prefix', staging, '--no-audit', '--no-fund', '--foreground-scripts', `aws-lambda-ric@${RIC_VERSION}`],
      'build aws-lambda-ric from source (it needs cmake, autoconf, automake, libtool and g++)',
    );
  });
  return { rie: join(folder, 'bin', 'aws-lambda-rie'), ric: join(folder, 'node_modules', 'aws-lambda-ric', 'index.mjs') };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface EmulatedFunctionOptions {
  /** The unzipped package: the task root. */
  readonly root: string;
  /** The template's Handler, `functions/processor.handler`. */
  readonly handler: string;
  readonly env: Record<string, string>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

export type InvocationOutcome =
  | { readonly ok: true; readonly result: unknown; readonly ms: number }
  | { readonly ok: false; readonly error: string; readonly timedOut: boolean; readonly ms: number };

/** One function in the emulator: one execution environment, so one invocation at a time, queued. */
export class EmulatedFunction {
  private queue: Promise<unknown> = Promise.resolve();
  private output = '';

  private constructor(
    private readonly emulator: ChildProcess,
    private readonly port: number,
  ) {
    emulator.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    emulator.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
  }

  static async start({ root, handler, env, timeoutSeconds, memoryMb }: EmulatedFunctionOptions): Promise<EmulatedFunction> {
    const { rie, ric } = lambdaRuntimeTools();
    const [port, runtimeApiPort] = [await freePort(), await freePort()];
    const emulator = spawn(
      rie,
      ['--runtime-interface-emulator-address', `127.0.0.1:${port}`, '--runtime-api-address', `127.0.0.1:${runtimeApiPort}`, process.execPath, ric, handler],
      {
        cwd: root,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...env, LAMBDA_TASK_ROOT: root, AWS_LAMBDA_FUNCTION_TIMEOUT: String(timeoutSeconds), AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb) },
      },
    );
    const fn = new EmulatedFunction(emulator, port);
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (emulator.exitCode !== null || Date.now() > deadline) throw new Error(`the Runtime Interface Emulator did not start:\n${fn.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return fn;
  }

  /** Everything the emulator and the function logged. */
  get logs(): string {
    return this.output;
  }

  /** The INIT phases the emulator reported, in milliseconds: one per start of the runtime. */
  initDurationsMs(): number[] {
    return [...this.output.matchAll(/INIT REPORT\(durationMs: ([\d.]+)\)/g)].map((match) => Number(match[1]));
  }

  /** Invokes the function as Lambda's synchronous Invoke does, after the invocations before it. */
  invoke(event: unknown): Promise<InvocationOutcome> {
    const outcome = this.queue.then(() => this.invokeNow(event));
    this.queue = outcome.catch(() => undefined);
    return outcome;
  }

  private async invokeNow(event: unknown): Promise<InvocationOutcome> {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${this.port}/2015-03-31/functions/function/invocations`, { method: 'POST', body: JSON.stringify(event) });
    const text = await response.text();
    const ms = performance.now() - started;
    if (/^Task timed out after/.test(text)) return { ok: false, error: text, timedOut: true, ms };
    const body = (text === '' ? null : JSON.parse(text)) as { errorType?: string; errorMessage?: string } | null;
    if (response.status !== 200 || (body !== null && typeof body === 'object' && typeof body.errorType === 'string')) {
      return { ok: false, error: `${body?.errorType ?? response.status}: ${body?.errorMessage ?? text}`, timedOut: false, ms };
    }
    return { ok: true, result: body, ms };
  }

  /** The runtime's process (the client, with the function in it), while one runs. */
  runtimePid(): number | undefined {
    const pid = this.emulator.pid;
    if (pid === undefined) return undefined;
    // The emulator is a Go program: the thread that started the runtime is any of its threads.
    try {
      return readdirSync(`/proc/${pid}/task`)
        .flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number))
        .at(0);
    } catch {
      return undefined;
    }
  }

  /** Stops the runtime's process as Lambda freezes an execution environment between invocations. */
  freeze(): number {
    const pid = this.runtimePid();
    if (pid === undefined) throw new Error('no runtime is running to freeze');
    process.kill(pid, 'SIGSTOP');
    return pid;
  }

  thaw(pid: number): void {
    process.kill(pid, 'SIGCONT');
  }

  /** Ends the emulator and the runtime with it. */
  stop(): void {
    if (this.emulator.pid !== undefined && this.emulator.exitCode === null) {
      try {
        process.kill(-this.emulator.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
