// SASL/SCRAM credentials come from Secrets Manager (here moto's server), read once per
// container: the functions' environment names the secret, never a credential, and an error
// about the secret never shows what it holds.
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configWithSecrets } from '../../../lib/aws/runtime.js';
import { schemaRegistryFromEnvironment } from '../../../lib/aws/schema-registry.js';
import { startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';

let moto: Emulator | undefined;
let secrets: SecretsManagerClient | undefined;
beforeAll(async () => {
  moto = await startMotoServer();
  secrets = new SecretsManagerClient({ ...moto.clientOptions, region: 'eu-west-1' });
});
afterAll(async () => {
  secrets?.destroy();
  await moto?.close();
});

const functionEnvironment = (secretArn?: string) => ({
  SLUICE_STATE_TABLE: 'orders-state',
  SLUICE_SNAPSHOT_BUCKET: 'orders-snapshots',
  KAFKA_BROKERS: 'b-1.orders.example:9096',
  KAFKA_AUTH: 'SCRAM',
  ...(secretArn ? { KAFKA_SASL_SECRET_ARN: secretArn } : {}),
});

async function secretHolding(name: string, text: string): Promise<string> {
  const { ARN } = await (secrets as SecretsManagerClient).send(new CreateSecretCommand({ Name: name, SecretString: text }));
  return ARN ?? '';
}

describe('SCRAM credentials from Secrets Manager', () => {
  it('are read from the secret the environment names', async () => {
    const arn = await secretHolding('AmazonMSK_orders', JSON.stringify({ username: 'sluice', password: 'hunter2-s3cret' }));
    const config = await configWithSecrets(functionEnvironment(arn), secrets);
    expect(config.kafka.authentication).toEqual({ kind: 'scram-sha-512', username: 'sluice', password: 'hunter2-s3cret' });
    expect(config.kafka.brokers).toEqual(['b-1.orders.example:9096']);
  });

  it('fail naming the secret, not its contents, when it is not MSK’s JSON', async () => {
    const arn = await secretHolding('AmazonMSK_plain', 'sluice:hunter2-s3cret');
    const failure = await configWithSecrets(functionEnvironment(arn), secrets).catch((error: unknown) => error as Error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe(
      `The secret ${arn} must be a JSON text with a "username" and a "password", as Amazon MSK's SASL/SCRAM secrets are (what it holds is not shown)`,
    );
  });

  it('are required: KAFKA_AUTH=SCRAM without a secret says what to set', async () => {
    await expect(configWithSecrets(functionEnvironment(), secrets)).rejects.toThrow(/^KAFKA_AUTH=SCRAM needs KAFKA_SASL_SECRET_ARN: a Secrets Manager secret/);
  });
});

describe('the schema registry from the environment', () => {
  it('takes its URL from SCHEMA_REGISTRY_URL and its credentials, once asked, from the secret SCHEMA_REGISTRY_SECRET_ARN names', async () => {
    const arn = await secretHolding('registry-credentials', JSON.stringify({ username: 'api-key', password: 'api-secret' }));
    const options = schemaRegistryFromEnvironment({ env: { SCHEMA_REGISTRY_URL: 'https://registry.example', SCHEMA_REGISTRY_SECRET_ARN: arn }, secrets });
    expect(options.url).toBe('https://registry.example');
    expect(JSON.stringify(options)).not.toContain('api-secret');
    await expect(options.credentials?.()).resolves.toEqual({ username: 'api-key', password: 'api-secret' });
  });

  it('has no credentials without a secret, and says what to set without a URL', () => {
    expect(schemaRegistryFromEnvironment({ env: { SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081' } })).toEqual({ url: 'http://127.0.0.1:8081' });
    expect(schemaRegistryFromEnvironment({ env: {}, defaultUrl: 'http://127.0.0.1:8081' }).url).toBe('http://127.0.0.1:8081');
    expect(() => schemaRegistryFromEnvironment({ env: {} })).toThrow('SCHEMA_REGISTRY_URL is not set: deploy with --param schemaRegistryUrl=');
  });
});
