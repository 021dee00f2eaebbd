import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { join } from 'node:path';

/** A stack frame's position in a bundle: `…/functions/processor.mjs:76:33931`. */
const BUNDLE_POSITION = /(?:file:\/\/)?[^\s()]*?\/?([^\s()/]+\.m?js):(\d+):(\d+)/g;

/**
 * Rewrites the bundle positions in a stack trace (as CloudWatch logs show it) to positions in
 * the sources, with the source maps that packaging keeps beside the zips. Positions in files
 * without a map stay as they are.
 */
export function symbolicate(trace: string, mapsFolder: string): string {
  const maps = new Map<string, SourceMap | undefined>();
  const mapOf = (bundle: string) => {
    if (!maps.has(bundle)) {
      const file = join(mapsFolder, `${bundle}.map`);
      maps.set(bundle, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload) : undefined);
    }
    return maps.get(bundle);
  };
  return trace.replace(BUNDLE_POSITION, (position, bundle: string, line: string, column: string) => {
    const entry = mapOf(bundle)?.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || !('originalSource' in entry)) return position;
    // The maps name sources relative to the build folder; the project's own path reads better.
    const source = entry.originalSource.replace(/^file:\/\//, '').replace(/^(?:\.\.?\/)+/, '');
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}
