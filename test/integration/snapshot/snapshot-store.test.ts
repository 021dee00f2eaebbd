// One contract for every SnapshotStore: S3 (s3rver) and a local folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../../lib/aws/clients.js';
import { startMotoServer, startS3Emulator, type Emulator } from '../../../lib/offline/emulators.js';
import { LocalFolderSnapshotStore } from '../../../lib/snapshot/local-folder-store.js';
import { ensureBucket, S3SnapshotStore } from '../../../lib/snapshot/s3-store.js';
import type { SnapshotStore } from '../../../lib/snapshot/snapshot-store.js';

let s3: Emulator;
let moto: Emulator;
const folders: string[] = [];

beforeAll(async () => {
  s3 = await startS3Emulator();
  moto = await startMotoServer();
});

afterAll(async () => {
  await s3.close();
  await moto.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

let buckets = 0;
const onS3 = (emulator: () => Emulator) => async () => {
  const client = createS3Client(emulator().clientOptions);
  const bucket = `sluice-snapshots-${buckets++}`;
  await ensureBucket(client, bucket);
  await ensureBucket(client, bucket);
  return new S3SnapshotStore(client, bucket, 'order-aggregation/');
};
const stores: [string, () => Promise<SnapshotStore>][] = [
  ['s3 (s3rver)', onS3(() => s3)],
  ['s3 (moto)', onS3(() => moto)],
  [
    'local folder',
    () => {
      const folder = mkdtempSync(join(tmpdir(), 'sluice-snapshots-'));
      folders.push(folder);
      return Promise.resolve(new LocalFolderSnapshotStore(join(folder, 'not-yet-created')));
    },
  ],
];

describe.each(stores)('%s snapshot store', (_, createStore) => {
  it('stores and returns bytes, and nothing for a key never written', async () => {
    const store = await createStore();
    const bytes = Buffer.from([0, 1, 2, 255]);
    await store.put('checkpoints/1/stage-1/0/3.bin', bytes);
    await store.put('checkpoints/1/manifest.json', '{"checkpoint":1}');
    expect(await store.get('checkpoints/1/stage-1/0/3.bin')).toEqual(bytes);
    expect((await store.get('checkpoints/1/manifest.json'))?.toString()).toBe('{"checkpoint":1}');
    expect(await store.get('checkpoints/2/manifest.json')).toBeUndefined();
  });

  it('lists keys by prefix in order, across pages, and deletes them', async () => {
    const store = await createStore();
    expect(await store.list('checkpoints/')).toEqual([]);
    const keys = Array.from({ length: 1_050 }, (_, i) => `checkpoints/7/state/${String(i).padStart(5, '0')}.json`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, key)));
    await store.put('savepoints/before-upgrade/manifest.json', '{}');
    expect(await store.list('checkpoints/7/')).toEqual(keys);
    expect(await store.list('savepoints/')).toEqual(['savepoints/before-upgrade/manifest.json']);
    await store.delete(keys.slice(0, 1_020));
    expect(await store.list('checkpoints/')).toEqual(keys.slice(1_020));
  });

  it('refuses keys that are not relative paths', async () => {
    const store = await createStore();
    await expect(store.put('../escape', 'x')).rejects.toThrow(/not a valid snapshot key/);
    await expect(store.get('/absolute')).rejects.toThrow(/not a valid snapshot key/);
  });

  it('counts its requests', async () => {
    const store = await createStore();
    await store.put('a/b', 'x');
    await store.get('a/b');
    await store.list('a/');
    expect(store.requests).toMatchObject({ puts: 1, gets: 1, lists: 1 });
  });
});
