import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const COMPLETE_MARKER = '.complete';

/** Where Sluice caches what it fetches once per machine (the broker, the schema registry, the deploy tools): `SLUICE_CACHE_DIR`, else `~/.cache/sluice`. */
export function sluiceCacheDir(): string {
  return process.env.SLUICE_CACHE_DIR ?? join(homedir(), '.cache', 'sluice');
}

/**
 * Fills a cache folder once and returns it. `build` fills a staging folder of its own, which is
 * then renamed into place whole, so a reader never sees half a build and builders that race (test
 * workers, two terminals) do not write into each other's. A rename that loses to another
 * builder's counts as done. The marker tells a finished folder from one an interrupted older
 * version of Sluice left half-written, which is built again.
 */
export function buildOnce(folder: string, build: (staging: string) => void): string {
  const marker = join(folder, COMPLETE_MARKER);
  if (existsSync(marker)) return folder;
  const staging = `${folder}.${randomUUID()}.tmp`;
  mkdirSync(staging, { recursive: true });
  try {
    build(staging);
    writeFileSync(join(staging, COMPLETE_MARKER), '');
    if (existsSync(folder) && !existsSync(marker)) rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
  } catch (error) {
    if (!existsSync(marker)) throw error;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return folder;
}
