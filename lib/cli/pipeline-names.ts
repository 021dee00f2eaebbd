import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Claims a pipeline's name for its file in the project: the name is the deployment's stack,
 * table and functions, and the offline state folder, so two files of one name would share
 * them. The claim lives in .sluice/pipelines/<name>; a file that has since been moved or
 * deleted gives its name up.
 */
export function claimPipelineName(projectDir: string, name: string, file: string): void {
  const folder = join(projectDir, '.sluice', 'pipelines');
  const claim = join(folder, name);
  const path = relative(projectDir, resolve(file));
  if (existsSync(claim)) {
    const owner = readFileSync(claim, 'utf8').trim();
    if (owner !== path && existsSync(join(projectDir, owner))) {
      throw new Error(
        `${path} and ${owner} both name their pipeline "${name}", which names its deployment, table and offline state: ` +
          `give one of them another name in StreamExecutionEnvironment.create({ name }) (or, if ${owner} is no pipeline now, delete .sluice/pipelines/${name})`,
      );
    }
  }
  mkdirSync(folder, { recursive: true });
  writeFileSync(claim, `${path}\n`);
}
