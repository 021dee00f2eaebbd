// The Python tools the tests use (moto's server, cfn-lint), installed once into a project-local
// virtual environment from the pinned requirements-dev.txt, so that `npm test` needs nothing
// but a Python 3 that can make a virtual environment.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PythonTools {
  /** The environment's interpreter, which has the requirements installed. */
  readonly python: string;
  /** Its scripts folder: `cfn-lint` is there. */
  readonly bin: string;
}

export interface PythonToolsOptions {
  /** The folder holding requirements-dev.txt; the environment goes into its `.sluice/python`. Default: this project's. */
  readonly projectDir?: string;
  /** The Python that makes the environment. Default `$PYTHON`, else `python3`. */
  readonly hostPython?: string;
  readonly log?: (line: string) => void;
}

/** A second process installing meanwhile has this long before its lock is taken as abandoned. */
const LOCK_STALE_MS = 15 * 60_000;

/**
 * The virtual environment with requirements-dev.txt installed: made on first use, and again
 * whenever requirements-dev.txt changes. Safe to call from several processes at once.
 */
export async function ensurePythonTools(options: PythonToolsOptions = {}): Promise<PythonTools> {
  const projectDir = resolve(options.projectDir ?? fileURLToPath(new URL('../..', import.meta.url)));
  const requirementsFile = join(projectDir, 'requirements-dev.txt');
  const requirements = readFileSync(requirementsFile, 'utf8');
  const dir = join(projectDir, '.sluice', 'python');
  const bin = join(dir, process.platform === 'win32' ? 'Scripts' : 'bin');
  const tools = { python: join(bin, process.platform === 'win32' ? 'python.exe' : 'python'), bin };
  const marker = join(dir, '.installed');
  const installed = () => existsSync(marker) && readFileSync(marker, 'utf8') === requirements;
  if (installed()) return tools;

  const lock = `${dir}.lock`;
  mkdirSync(join(projectDir, '.sluice'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (installed()) return tools;
      const lockedAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (lockedAt !== undefined && Date.now() - lockedAt > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((done) => setTimeout(done, 500));
    }
  }
  try {
    if (installed()) return tools;
    const host = options.hostPython ?? process.env.PYTHON ?? 'python3';
    options.log?.(`Installing the Python tools of requirements-dev.txt into ${dir} (once)`);
    rmSync(dir, { recursive: true, force: true });
    const pip = await makeEnvironment(host, dir, tools.python);
    await run(pip[0] ?? host, [...pip.slice(1), 'install', '--quiet', '--disable-pip-version-check', '-r', requirementsFile], {
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: unknown) => {
      throw new Error(`pip could not install requirements-dev.txt into ${dir}: ${describe(error)}`);
    });
    writeFileSync(marker, requirements);
    return tools;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Makes the environment; returns the pip command that installs into it. */
async function makeEnvironment(host: string, dir: string, python: string): Promise<string[]> {
  try {
    await run(host, ['-m', 'venv', dir]);
    return [python, '-m', 'pip'];
  } catch (withPip) {
    // Debian's python3 lacks ensurepip unless python3-venv is installed; its own pip can still
    // install into an environment made without one.
    try {
      await run(host, ['-m', 'venv', '--without-pip', dir]);
      await run(host, ['-m', 'pip', '--version']);
      return [host, '-m', 'pip', '--python', python];
    } catch {
      throw new Error(
        `${host} could not make a virtual environment for the tests' Python tools (${describe(withPip)}). ` +
          `Install Python 3 with its venv module (Debian: apt-get install python3-venv), or set PYTHON to another Python 3.`,
      );
    }
  }
}

function describe(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message?: string };
  return (stderr?.trim() || message || String(error)).slice(-2_000);
}
