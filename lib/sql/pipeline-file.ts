import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { StreamExecutionEnvironment } from '../api/environment.js';
import { sqlPipeline } from './table-environment.js';

/** Whether a pipeline file is SQL (a `.sql` script) rather than a TypeScript module. */
export function isSqlPipelineFile(file: string): boolean {
  return file.toLowerCase().endsWith('.sql');
}

/** The pipeline's name when its script does not SET 'pipeline.name': the file's name without `.sql`. */
export function sqlPipelineName(file: string): string {
  return basename(file).replace(/\.sql$/i, '');
}

/** A `.sql` file's pipeline: its statements planned on a new environment. */
export function loadSqlPipeline(file: string): StreamExecutionEnvironment {
  return sqlPipeline(readFileSync(file, 'utf8'), { name: sqlPipelineName(file) });
}
