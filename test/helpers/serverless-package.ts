// `sluice deploy --package-only` of a pipeline file into a folder of its own, for the deployment tests.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';

export const run = promisify(execFile);

export interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

/** Packages in a temporary folder, removed after the file's tests; call from a test. */
export function usePackaging() {
  const folders: string[] = [];
  afterAll(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });
  return async (
    pipelineFile: string,
    trigger = 'msk',
    extraEnv: Record<string, string> = {},
    params: Record<string, string> = {},
    stage?: string,
  ): Promise<{ folder: string; template: Template }> => {
    const folder = mkdtempSync(join(tmpdir(), 'sluice-package-'));
    folders.push(folder);
    const env = {
      ...process.env,
      ...extraEnv,
      SLUICE_KAFKA_TRIGGER: trigger,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: 'none',
    };
    const paramArgs = Object.entries(params).flatMap(([name, value]) => ['--param', `${name}=${value}`]);
    const stageArgs = stage === undefined ? [] : ['--stage', stage];
    await run(process.execPath, ['bin/sluice.js', 'deploy', pipelineFile, '--package-only', '--package', folder, ...stageArgs, ...paramArgs], { env, timeout: 240_000 });
    const template = JSON.parse(readFileSync(join(folder, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
    return { folder, template };
  };
}

export function ofType(template: Template, type: string) {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}
