import { afterAll, beforeAll } from 'vitest';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { startDynamoDbEmulator, type Emulator } from '../../../lib/offline/emulators.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import { shardStoreContract } from './shard-store-contract.js';

let dynamo: Emulator;

beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
});

afterAll(async () => {
  await dynamo.close();
});

shardStoreContract('memory', () => Promise.resolve(new MemoryShardStore()));

let tables = 0;
shardStoreContract('dynamodb', async () => {
  const client = createDocumentClient(dynamo.clientOptions);
  const table = `sluice-state-${tables++}`;
  await ensureStateTable(client, table);
  return new DynamoShardStore(client, table);
});
