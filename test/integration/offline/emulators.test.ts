import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lib/aws/clients.js';
import { startDynamoDbEmulatorThread } from '../../../lib/offline/emulators.js';
import { ensureStateTable } from '../../../lib/state/dynamodb-shard-store.js';

describe('the DynamoDB emulator on a thread of its own', () => {
  const folder = mkdtempSync(join(tmpdir(), 'sluice-dynalite-'));
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('closes its LevelDB store cleanly: a restart on the same folder reads what was written', async () => {
    const first = await startDynamoDbEmulatorThread(folder);
    const writer = createDocumentClient(first.clientOptions);
    await ensureStateTable(writer, 'kept');
    await writer.send(new PutCommand({ TableName: 'kept', Item: { pk: 'a', sk: 'b', value: 42 } }));
    await first.close();

    const second = await startDynamoDbEmulatorThread(folder);
    try {
      const reader = createDocumentClient(second.clientOptions);
      const { Item } = await reader.send(new GetCommand({ TableName: 'kept', Key: { pk: 'a', sk: 'b' }, ConsistentRead: true }));
      expect(Item).toEqual({ pk: 'a', sk: 'b', value: 42 });
    } finally {
      await second.close();
    }
  });
});
