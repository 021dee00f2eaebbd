import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { GlueSchemaRegistryOptions } from '../formats/glue-registry.js';
import type { SchemaRegistryOptions } from '../formats/registry.js';
import { usernameAndPassword } from './kafka-secret.js';

/** The environment variables a deployment sets from its `schemaRegistryUrl` and `schemaRegistrySecretArn` parameters. */
export const SCHEMA_REGISTRY_URL_VARIABLE = 'SCHEMA_REGISTRY_URL';
export const SCHEMA_REGISTRY_SECRET_VARIABLE = 'SCHEMA_REGISTRY_SECRET_ARN';
/** The environment variable a deployment sets from its `glueSchemaRegistryName` parameter. */
export const GLUE_SCHEMA_REGISTRY_VARIABLE = 'GLUE_SCHEMA_REGISTRY_NAME';

/**
 * The schema registry a deployed pipeline uses: its URL from `SCHEMA_REGISTRY_URL`, and its
 * credentials, if any, from the Secrets Manager secret `SCHEMA_REGISTRY_SECRET_ARN` names (JSON
 * with a `username` and a `password`: Confluent Cloud's API key and secret), read once per
 * container before the first request, never from an environment variable. `defaultUrl` stands
 * in where `SCHEMA_REGISTRY_URL` is not set (the local registry, for an example).
 */
export function schemaRegistryFromEnvironment(
  { env = process.env, defaultUrl, secrets }: { env?: NodeJS.ProcessEnv; defaultUrl?: string; secrets?: SecretsManagerClient } = {},
): SchemaRegistryOptions {
  const url = env[SCHEMA_REGISTRY_URL_VARIABLE] ?? defaultUrl;
  if (!url) {
    throw new Error(
      `${SCHEMA_REGISTRY_URL_VARIABLE} is not set: deploy with --param schemaRegistryUrl=https://registry:8081, ` +
        'or run offline with --schema-registry',
    );
  }
  const secretId = env[SCHEMA_REGISTRY_SECRET_VARIABLE];
  return {
    url,
    ...(secretId ? { credentials: () => usernameAndPassword(secretId, "as a schema registry's API key and secret are kept", secrets) } : {}),
  };
}

/**
 * The AWS Glue Schema Registry a deployed pipeline uses: its name from `GLUE_SCHEMA_REGISTRY_NAME`
 * (which `--param glueSchemaRegistryName=…` sets, with the processors' permissions on it), in the
 * function's region, with the function's role. `overrides` adds what the environment does not
 * say (`compression`, `compatibility`), or stands in for it offline (`registryName`, `endpoint`).
 */
export function glueSchemaRegistryFromEnvironment(
  { env = process.env, ...overrides }: { env?: NodeJS.ProcessEnv } & GlueSchemaRegistryOptions = {},
): GlueSchemaRegistryOptions {
  const registryName = env[GLUE_SCHEMA_REGISTRY_VARIABLE] ?? overrides.registryName;
  if (!registryName) {
    throw new Error(`${GLUE_SCHEMA_REGISTRY_VARIABLE} is not set: deploy with --param glueSchemaRegistryName=orders-registry, or give a registryName`);
  }
  return { ...overrides, registryName };
}
