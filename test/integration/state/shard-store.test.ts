import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { startDynamoDbEmulator, startDynamoDbEmulatorThread, startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import type { PackOptions } from '../../../lib/state/packs.js';
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
const onDynamoDb = (emulator: () => Emulator) => async (packing?: PackOptions) => {
  const client = createDocumentClient(emulator().clientOptions);
  const table = `sluice-state-${tables++}`;
  await ensureStateTable(client, table);
  return new DynamoShardStore(client, table, undefined, packing);
};
shardStoreContract('dynamodb (dynalite)', onDynamoDb(() => dynamo));
shardStoreContract('dynamodb (dynalite on a thread of its own, on disk)', onDynamoDb(() => dynamoThread));
// moto validates requests more strictly than dynalite (expressions, item sizes, batch limits).
shardStoreContract('dynamodb (moto)', onDynamoDb(() => moto), 1_000);
