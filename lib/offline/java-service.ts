import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the local Java services (the Kafka broker, the schema registry) share: running their
 * build tools, starting them detached with a pid file, and stopping them.
 */

export function runTool(command: string, args: string[], what: string, env?: NodeJS.ProcessEnv): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
  if (result.error) {
    throw new Error(`Could not run ${command} to ${what}: ${result.error.message}. Is it installed and on PATH?`);
  }
  if (result.status !== 0) {
    const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${command} failed to ${what} (exit ${result.status}):\n${output}`);
  }
}

/** A tool of the JDK (`java` unless named): from JAVA_HOME when it is set, else from PATH. */
export function javaCommand(tool: 'java' | 'javac' = 'java'): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', tool) : tool;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function logTail(file: string, lines = 40): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

function logTails(files: readonly string[]): string {
  return files.map((file) => `The end of ${file}:\n${logTail(file)}`).join('\n');
}

/** The pid in `pidFile`, if that process is alive and its command line names `marker`. */
export function runningPid(pidFile: string, marker: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return commandLine.includes(marker) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Starts `java args` in its own process group, its output appended to `logFile`; returns its pid. */
export function startJava(args: string[], logFile: string, pidFile: string): number {
  const out = openSync(logFile, 'a');
  const child = spawn(javaCommand(), args, { detached: true, stdio: ['ignore', out, out] });
  closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Could not start ${javaCommand()}: is a Java 17+ runtime installed?`);
  child.unref();
  writeFileSync(pidFile, `${pid}\n`);
  return pid;
}

/**
 * Stops the process in `pidFile`: SIGTERM for a controlled shutdown, then SIGKILL if it has not
 * exited within the grace period (none: killed as a crashed machine would leave it, for fault
 * tests). Returns false when none was running.
 */
export async function stopJava(
  pidFile: string,
  marker: string,
  { graceMs, name, log }: { graceMs: number; name: string; log: (line: string) => void },
): Promise<boolean> {
  const pid = runningPid(pidFile, marker);
  rmSync(pidFile, { force: true });
  if (pid === undefined) return false;
  log(`Stopping the ${name} (pid ${pid})${graceMs === 0 ? ' with SIGKILL' : ''}`);
  process.kill(pid, graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (isAlive(pid)) {
    if (graceMs > 0) log(`The ${name} did not stop within ${graceMs} ms; killing it`);
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Polls `answers` until it is true, failing early if `pid` exits and late after `timeoutMs`. */
export async function waitUntilAnswering(
  answers: () => Promise<boolean>,
  { pid, timeoutMs, name, at, logFiles }: { pid: number; timeoutMs: number; name: string; at: string; logFiles: readonly string[] },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) throw new Error(`The ${name} (pid ${pid}) exited while starting. ${logTails(logFiles)}`);
    if (await answers()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`The ${name} (pid ${pid}) did not answer at ${at} within ${timeoutMs} ms. ${logTails(logFiles)}`);
}
