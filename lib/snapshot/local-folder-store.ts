import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { checkSnapshotKey, newRequestCounts, randomUniqueId, type SnapshotStore } from './snapshot-store.js';

/** Snapshots in a local folder: for tests and offline runs without S3. */
export class LocalFolderSnapshotStore implements SnapshotStore {
  readonly requests = newRequestCounts();
  readonly uniqueId = randomUniqueId;

  constructor(private readonly directory: string) {}

  async put(key: string, body: Buffer | string): Promise<void> {
    this.requests.puts++;
    const path = join(this.directory, checkSnapshotKey(key));
    await mkdir(dirname(path), { recursive: true });
    // Written aside and renamed, so that a reader never sees half an object.
    const staging = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(staging, body);
    await rename(staging, path);
  }

  async get(key: string): Promise<Buffer | undefined> {
    this.requests.gets++;
    try {
      return await readFile(join(this.directory, checkSnapshotKey(key)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    this.requests.lists++;
    let entries: string[];
    try {
      entries = await readdir(this.directory, { recursive: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const keys: string[] = [];
    for (const entry of entries) {
      const key = relative(this.directory, join(this.directory, entry)).split(sep).join('/');
      if (key.startsWith(prefix) && !key.endsWith('.tmp') && !(await this.isDirectory(entry))) keys.push(key);
    }
    return keys.sort();
  }

  private async isDirectory(entry: string): Promise<boolean> {
    try {
      await readdir(join(this.directory, entry));
      return true;
    } catch {
      return false;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    this.requests.deletes++;
    await Promise.all(keys.map((key) => rm(join(this.directory, checkSnapshotKey(key)), { force: true })));
  }
}
