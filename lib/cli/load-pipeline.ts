import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StreamExecutionEnvironment } from '../api/environment.js';

/** Loads a pipeline file; its default export must be the pipeline's environment. */
export async function loadPipeline(file: string): Promise<StreamExecutionEnvironment> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`Pipeline file ${file} does not exist`);
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  if (!(module.default instanceof StreamExecutionEnvironment)) {
    throw new Error(
      `${file} has no default export of a StreamExecutionEnvironment: end the file with \`export default env\``,
    );
  }
  return module.default;
}
