import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { ScramCredentials } from '../kafka/connection.js';

/** The environment variable naming the Secrets Manager secret of the SASL/SCRAM credentials. */
export const SCRAM_SECRET_VARIABLE = 'KAFKA_SASL_SECRET_ARN';

/**
 * SASL/SCRAM credentials from a Secrets Manager secret in Amazon MSK's shape: JSON with a
 * `username` and a `password` (the same secret the event source mapping reads). Errors name
 * the secret, never what it holds.
 */
export function scramCredentials(secretId: string, client?: SecretsManagerClient): Promise<ScramCredentials> {
  return usernameAndPassword(secretId, "as Amazon MSK's SASL/SCRAM secrets are", client);
}

/** A Secrets Manager secret's JSON `username` and `password`; `shape` says where the shape comes from, for the error. */
export async function usernameAndPassword(
  secretId: string,
  shape: string,
  client?: SecretsManagerClient,
): Promise<{ username: string; password: string }> {
  // Loaded here, not with the module: only deployments with a secret read one, and a container's INIT is billed.
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const { SecretString } = await (client ?? new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretId }));
  let held: { username?: unknown; password?: unknown } | undefined;
  try {
    held = JSON.parse(SecretString ?? '') as typeof held;
  } catch {
    held = undefined;
  }
  const username = held?.username;
  const password = held?.password;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '') {
    throw new Error(`The secret ${secretId} must be a JSON text with a "username" and a "password", ${shape} (what it holds is not shown)`);
  }
  return { username, password };
}
