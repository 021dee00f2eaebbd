import { sqlPipeline, SqlError } from '../../lib/sql/index.js';

/** The SqlError that planning `script` throws; any other outcome fails the test. */
export function sqlFailure(script: string): SqlError {
  try {
    sqlPipeline(script, { name: 'sql-failure' });
  } catch (error) {
    if (error instanceof SqlError) return error;
    throw error;
  }
  throw new Error('the script planned');
}
