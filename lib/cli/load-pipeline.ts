import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StreamExecutionEnvironment } from '../api/environment.js';
import type { InputGenerator } from '../offline/offline.js';

/** A pipeline file's exports: the environment (default) and, optionally, an input generator for offline mode. */
export interface PipelineModule {
  readonly pipeline: StreamExecutionEnvironment;
  readonly generateInput?: InputGenerator;
}

/** Loads a pipeline file; its default export must be the pipeline's environment. */
export async function loadPipelineModule(file: string): Promise<PipelineModule> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`Pipeline file ${file} does not exist`);
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown; generateInput?: unknown };
  if (!(module.default instanceof StreamExecutionEnvironment)) {
    throw new Error(
      `${file} has no default export of a StreamExecutionEnvironment: end the file with \`export default env\``,
    );
  }
  if (module.generateInput !== undefined && typeof module.generateInput !== 'function') {
    throw new Error(`${file} exports generateInput, but not as a function (index: number) => { topic, key, value }`);
  }
  return { pipeline: module.default, ...(module.generateInput ? { generateInput: module.generateInput as InputGenerator } : {}) };
}

export async function loadPipeline(file: string): Promise<StreamExecutionEnvironment> {
  return (await loadPipelineModule(file)).pipeline;
}
