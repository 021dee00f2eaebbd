import { checkSnapshotKey, newRequestCounts, randomUniqueId, type SnapshotStore } from './snapshot-store.js';

/** Snapshots in memory: for unit tests and the simulation. */
export class MemorySnapshotStore implements SnapshotStore {
  readonly requests = newRequestCounts();
  readonly uniqueId = randomUniqueId;
  private readonly objects = new Map<string, Buffer>();

  put(key: string, body: Buffer | string): Promise<void> {
    this.requests.puts++;
    this.objects.set(checkSnapshotKey(key), Buffer.from(body));
    return Promise.resolve();
  }

  get(key: string): Promise<Buffer | undefined> {
    this.requests.gets++;
    return Promise.resolve(this.objects.get(checkSnapshotKey(key)));
  }

  list(prefix: string): Promise<string[]> {
    this.requests.lists++;
    return Promise.resolve([...this.objects.keys()].filter((key) => key.startsWith(prefix)).sort());
  }

  delete(keys: readonly string[]): Promise<void> {
    this.requests.deletes++;
    for (const key of keys) this.objects.delete(checkSnapshotKey(key));
    return Promise.resolve();
  }
}
