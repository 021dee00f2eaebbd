import { afterAll, beforeAll } from 'vitest';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { startDynamoDbEmulator, startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';
import { DynamoShardStore, ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';
import { MemoryShardStore } from '../../../lib/state/memory-shard-store.js';
import { shardStoreContract } from './shard-store-contract.js';

let dynamo: Emulator;
let moto: Emulator;

beforeAll(async () => {
  dynamo = await startDynamoDbEmulator();
  moto = await startMotoServer();
});

afterAll(async () => {
  await dynamo.close();
  await moto.close();
});

shardStoreContract('memory', () => Promise.resolve(new MemoryShardStore()));

let tables = 0;
const onDynamoDb = (emulator: () => Emulator) => async () => {
  const client = createDocumentClient(emulator().clientOptions);
  const table = `sluice-state-${tables++}`;
  await ensureStateTable(client, table);
  return new DynamoShardStore(client, table);
};
shardStoreContract('dynamodb (dynalite)', onDynamoDb(() => dynamo));
// moto validates requests more strictly than dynalite (expressions, item sizes, batch limits).
shardStoreContract('dynamodb (moto)', onDynamoDb(() => moto), 1_000);
