// Runs the `sluice` command in this process and collects what it printed.
import { main } from '../../lib/cli/sluice.js';

export async function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    args,
    (text) => (stdout += text),
    (text) => (stderr += text),
  );
  return { code, stdout, stderr };
}
