import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { startDynamoDbEmulator, startDynamoDbEmulatorThread, startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import type { PackOptions } from '../../../lib/state/packs.js';
import { keyRef } from '../../../lib/state/keys.js';
import { StateWrittenBeforeKeyPacksError } from '../../../lib/state/shard-store.js';
import { shardStoreContract } from './shard-store-contract.js';

let dynamo: Emulator;
let dynamoThread: Emulator;
let moto: Emulator;
const folder = mkdtempSync(join(tmpdir(), 'sluice-dynalite-'));

beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
  dynamoThread = await startDynamoDbEmulatorThread(folder);
  moto = await startMotoServer();
});

afterAll(async () => {
  await dynamo.close();
  await dynamoThread.close();
  await moto.close();
  rmSync(folder, { recursive: true, force: true });
});

shardStoreContract('memory', (packing) => Promise.resolve(new MemoryShardStore(packing)));

let tables = 0;
const freshStateTable = async (emulator: Emulator) => {
  const client = createDocumentClient(emulator.clientOptions);
  const table = `sluice-state-${tables++}`;
  await ensureStateTable(client, table);
  return { client, table };
};
const onDynamoDb = (emulator: () => Emulator) => async (packing?: PackOptions) => {
  const { client, table } = await freshStateTable(emulator());
  return new DynamoShardStore(client, table, undefined, packing);
};
shardStoreContract('dynamodb (dynalite)', onDynamoDb(() => dynamo));
shardStoreContract('dynamodb (dynalite on a thread of its own, on disk)', onDynamoDb(() => dynamoThread));
// moto validates requests more strictly than dynalite (expressions, item sizes, batch limits).
shardStoreContract('dynamodb (moto)', onDynamoDb(() => moto), 1_000);

describe('a state table written before key packs', () => {
  it('refuses a claim, naming the shard and the move by savepoint, and lets a restore claim over it, delete its per-key items and write the layout', async () => {
    const { client, table } = await freshStateTable(dynamo);
    const shard = { stage: 'stage-1', shard: 3 };
    // The record as versions before key packs wrote it: no buckets, the keys in `key#` items of their own.
    await client.send(
      new PutCommand({
        TableName: table,
        Item: { pk: 'shard#stage-1#3', sk: 'record', epoch: 7, committedEpoch: 7, aborted: '[]', progress: JSON.stringify({ offset: 42 }) },
      }),
    );
    await client.send(new PutCommand({ TableName: table, Item: { pk: 'key#stage-1#3#17', sk: '"k"', cur: '{"sum":5}', curEpoch: 7 } }));
    const store = new DynamoShardStore(client, table);

    const refused = await store.claim(shard).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StateWrittenBeforeKeyPacksError);
    expect((refused as Error).message).toContain('Shard stage-1/3');
    expect((refused as Error).message).toContain('sluice savepoint');
    expect((refused as Error).message).toContain('sluice restore --savepoint');

    const restoring = await store.claim(shard, [], { replacingState: true });
    expect(restoring.epoch).toBe(8);
    expect(restoring.progress).toEqual({ offset: 42 });
    expect(await store.deleteKeyedState()).toBe(1);
    const oldKey = await client.send(new GetCommand({ TableName: table, Key: { pk: 'key#stage-1#3#17', sk: '"k"' } }));
    expect(oldKey.Item).toBeUndefined();
    await store.commit(restoring, { offset: 42 });
    expect((await store.claim(shard)).epoch).toBe(9);
  });
});

describe('the shard record in DynamoDB', () => {
  it('stores its progress, and its packs their entries, deflated, counts its write units from that, and reads a record of a version that stored JSON', async () => {
    const { client, table } = await freshStateTable(dynamo);
    const store = new DynamoShardStore(client, table);
    const shard = { stage: 'stage-1', shard: 0 };
    // Timers name their keys, and the position repeats the executor: the JSON repeats itself.
    const timers = Array.from({ length: 40 }, (_, i) => ({ operator: 'window', domain: 'event', key: { value: `category-${i}`, keyGroup: i }, timestamp: 1_800_000_000_000 }));
    const progress = { offset: 1_000, executor: { watermark: 1, timers }, position: { checkpoint: 3, offset: 900, executor: { watermark: 0, timers } } };
    const claim = await store.claim(shard);
    // The pack's entries repeat each state's field names: stored deflated too.
    const changes = timers.map(({ key }) => ({ key: keyRef(key.value, 128), state: { 'window/windows': { '1800000000000:1800000300000': { category: key.value, amount: 1 } } } }));
    await store.write(claim, changes);
    const pack = await client.send(new GetCommand({ TableName: table, Key: { pk: 'pack#stage-1#0#b0', sk: 'pack' } }));
    const entries = pack.Item?.entries as Uint8Array;
    expect(entries).toBeInstanceOf(Uint8Array);
    expect(Object.keys(JSON.parse(inflateRawSync(entries).toString('utf8')) as object)).toHaveLength(40);
    const unitsBefore = store.requests.writeUnits;
    await store.commit(claim, progress);
    const { Item } = await client.send(new GetCommand({ TableName: table, Key: { pk: 'shard#stage-1#0', sk: 'record' } }));
    expect(Item?.progress).toBeInstanceOf(Uint8Array);
    const stored = Item?.progress as Uint8Array;
    expect(JSON.parse(inflateRawSync(stored).toString('utf8'))).toEqual(progress);
    expect(stored.length * 5).toBeLessThan(JSON.stringify(progress).length);
    expect(store.requests.writeUnits - unitsBefore).toBe(Math.ceil((stored.length + '[]'.length + 100) / 1_024));
    expect((await store.peek(shard))?.progress).toEqual(progress);

    // A record and a pack as the version before compression wrote them, with key packs' layout.
    await client.send(
      new PutCommand({
        TableName: table,
        Item: { pk: 'shard#stage-1#1', sk: 'record', epoch: 2, committedEpoch: 2, aborted: '[]', progress: JSON.stringify({ offset: 7 }), buckets: 1, liveBytes: 0, density: 1 },
      }),
    );
    await client.send(new PutCommand({ TableName: table, Item: { pk: 'pack#stage-1#1#b0', sk: 'pack', entries: JSON.stringify({ '"k"': [{ count: 5 }, 2] }), ver: 1, epoch: 2 } }));
    const older = await store.claim({ stage: 'stage-1', shard: 1 });
    expect(older).toMatchObject({ epoch: 3, committedEpoch: 2, progress: { offset: 7 } });
    expect(Object.fromEntries(await store.read(older, [keyRef('k', 128)]))).toEqual({ '"k"': { count: 5 } });
  });
});
