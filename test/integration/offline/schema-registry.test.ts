// The local schema registry keeps the ids it gave through a kill and a restart: records in the
// topics name their schemas by id, so a registry that forgot them would make them unreadable,
// or read them with another schema. A registry of its own, on its own port and state folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalSchemaRegistry, stopLocalSchemaRegistry } from '../../../lib/offline/schema-registry.js';

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-registry-'));
const options = { port: 18_181, stateDir };
afterAll(async () => {
  await stopLocalSchemaRegistry(options, 0);
  rmSync(stateDir, { recursive: true, force: true });
});

async function register(url: string, subject: string, schema: object): Promise<number> {
  const response = await fetch(`${url}/subjects/${subject}/versions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  return ((await response.json()) as { id: number }).id;
}

describe('the local schema registry', () => {
  it('keeps the ids it gave through a SIGKILL and a restart', async () => {
    const first = await startLocalSchemaRegistry(options);
    expect(first.started).toBe(true);
    const order = { type: 'record', name: 'Order', fields: [{ name: 'id', type: 'string' }] };
    const total = { type: 'record', name: 'Total', fields: [{ name: 'amount', type: 'double' }] };
    const orderId = await register(first.url, 'orders-value', order);
    await stopLocalSchemaRegistry(options, 0);

    const second = await startLocalSchemaRegistry(options);
    expect(second.started).toBe(true);
    // A schema registered after the restart gets a new id, not one the killed registry gave.
    const totalId = await register(second.url, 'totals-value', total);
    expect(totalId).not.toBe(orderId);
    const held = (await (await fetch(`${second.url}/schemas/ids/${orderId}`)).json()) as { schema: string };
    expect(JSON.parse(held.schema)).toEqual(order);
  }, 180_000);
});
