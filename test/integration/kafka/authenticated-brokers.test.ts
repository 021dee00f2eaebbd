// Encrypted and authenticated brokers, as Amazon MSK always has them: a broker of this file's own
// with TLS, SASL_SSL/SCRAM-SHA-512 and SASL_SSL/OAUTHBEARER carrying MSK IAM tokens, behind a
// certificate authority made for the run (lib/offline/broker-security.ts), each token's SigV4
// signature checked by infra/kafka/security/MskIamTokenValidator.java. The pipeline runs exactly
// once over SCRAM and over IAM; every refusal fails at once, in one line that says what to fix.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnvironment } from '../../../lib/aws/runtime.js';
import { KafkaAdmin, KafkaAuthenticationError, type KafkaAuthentication, type KafkaConnectionOptions } from '../../../lib/kafka/index.js';
import type { SecuredListeners } from '../../../lib/offline/broker-security.js';
import { startLocalBroker, stopLocalBroker } from '../../../lib/offline/kafka-broker.js';
import { runHandlersOverEvents } from '../../helpers/handler-run.js';
import { useRuntimeEnvironment } from '../../helpers/runtime-environment.js';
import { runSchedule } from '../../helpers/runtime-schedule.js';

const PORT = 19392;
const REGION = 'eu-west-1';
const SCRAM_USER = { username: 'orders-pipeline', password: randomBytes(12).toString('hex') };
const ACCESS_KEY = { accessKeyId: 'AKIASLUICETEST000001', secretAccessKey: randomBytes(20).toString('base64') };
/** Refusals come back in one round trip or two; kafkajs's retries of a connection error would take seconds. */
const PROMPT_MS = 2_000;

const stateDir = mkdtempSync(join(tmpdir(), 'sluice-secured-broker-'));
let plaintext: string[] = [];
let secured: SecuredListeners | undefined;

beforeAll(async () => {
  const broker = await startLocalBroker({
    port: PORT,
    stateDir,
    fresh: true,
    security: { scramUsers: [SCRAM_USER], mskIam: { region: REGION, ...ACCESS_KEY }, maxReauthenticationMs: 60_000 },
  });
  plaintext = broker.brokers;
  secured = broker.secured;
});
afterAll(async () => {
  await stopLocalBroker({ port: PORT, stateDir });
  rmSync(stateDir, { recursive: true, force: true });
});
const environment = useRuntimeEnvironment(() => ({ brokers: plaintext }));

function listeners(): SecuredListeners {
  if (!secured) throw new Error('the secured broker did not start');
  return secured;
}

const scram = (password = SCRAM_USER.password): KafkaAuthentication => ({ kind: 'scram-sha-512', username: SCRAM_USER.username, password, ca: listeners().caPem });
const iam = (credentials: Partial<typeof ACCESS_KEY> & { expiration?: Date } = {}, region = REGION): KafkaAuthentication => ({
  kind: 'msk-iam',
  region,
  ca: listeners().caPem,
  credentials: () => Promise.resolve({ ...ACCESS_KEY, ...credentials }),
});

/** The cluster's description over `connection`, or the error it failed with and how long that took. */
async function describeOver(connection: KafkaConnectionOptions): Promise<{ brokers?: number; error?: Error; ms: number }> {
  const admin = new KafkaAdmin(connection);
  const started = Date.now();
  try {
    return { brokers: (await admin.describeCluster()).brokers.length, ms: Date.now() - started };
  } catch (error) {
    return { error: error as Error, ms: Date.now() - started };
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** Expects a prompt, one-line KafkaAuthenticationError whose message matches `message`. */
async function expectRefused(connection: KafkaConnectionOptions, message: RegExp): Promise<string> {
  const { error, ms } = await describeOver(connection);
  expect(error).toBeInstanceOf(KafkaAuthenticationError);
  expect(error?.message).toMatch(message);
  expect(error?.message).not.toContain('\n');
  expect(ms).toBeLessThan(PROMPT_MS);
  return error?.message ?? '';
}

describe('TLS alone', () => {
  it('connects to a broker whose certificate chains to the CA given', async () => {
    expect(await describeOver({ brokers: listeners().ssl, authentication: { kind: 'tls', ca: listeners().caPem } })).toMatchObject({ brokers: 1 });
  });

  it('verifies the certificate: without the CA, or with another, it fails at once and says to give the CA', async () => {
    await expectRefused(
      { brokers: listeners().ssl, authentication: { kind: 'tls' } },
      /^Kafka broker 127\.0\.0\.1:\d+ presented a certificate that fails verification \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: .*\): if the cluster has its own certificate authority, give its PEM certificate \(KAFKA_TLS_CA_FILE/,
    );
    await expectRefused(
      { brokers: listeners().ssl, authentication: { kind: 'tls', ca: rootCertificates[0] ?? '' } },
      /fails verification \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: .*\): the certificate authority given \(KAFKA_TLS_CA_FILE, or `ca`\) is not the one that signed/,
    );
  });

  it('verifies the host name: the certificate names 127.0.0.1, so localhost is refused', async () => {
    const port = listeners().ssl[0]?.split(':')[1] ?? '';
    await expectRefused(
      { brokers: [`localhost:${port}`], authentication: { kind: 'tls', ca: listeners().caPem } },
      /^Kafka broker localhost:\d+ presented a certificate that fails verification \(ERR_TLS_CERT_ALTNAME_INVALID: .*\): connect by a name the broker’s certificate holds/,
    );
  });
});

describe('SASL/SCRAM-SHA-512 over TLS', () => {
  it('connects with the right password, and refuses a wrong one in one line that names the user, never the password', async () => {
    expect(await describeOver({ brokers: listeners().saslSsl, authentication: scram() })).toMatchObject({ brokers: 1 });
    const message = await expectRefused(
      { brokers: listeners().saslSsl, authentication: scram('not-the-password') },
      /^Kafka broker 127\.0\.0\.1:\d+ refused SASL\/SCRAM-SHA-512 authentication \(.*invalid credentials.*\): check the username \("orders-pipeline"\) and password in the secret KAFKA_SASL_SECRET_ARN names/,
    );
    expect(message).not.toContain('not-the-password');
  });

  it('runs the pipeline exactly once through injected faults', async () => {
    const result = await runSchedule({ ...environment(), runtimeKafka: { brokers: listeners().saslSsl, authentication: scram() } }, 'one-stage', 300, { orders: 600 });
    expect(result.problems).toEqual([]);
    expect(result.checkpoints).toBeGreaterThan(0);
  }, 300_000);

  it('serves the functions configured from the environment, fed self-managed Kafka events', async () => {
    const caFile = join(stateDir, 'client-ca.pem');
    writeFileSync(caFile, listeners().caPem);
    const { kafka } = configFromEnvironment({
      SLUICE_STATE_TABLE: 'unused',
      SLUICE_SNAPSHOT_BUCKET: 'unused',
      KAFKA_BROKERS: listeners().saslSsl.join(','),
      KAFKA_AUTH: 'SCRAM',
      KAFKA_SASL_USERNAME: SCRAM_USER.username,
      KAFKA_SASL_PASSWORD: SCRAM_USER.password,
      KAFKA_TLS_CA_FILE: caFile,
    });
    await runHandlersOverEvents({ brokers: plaintext, runtimeKafka: kafka, dynamo: environment().dynamo, events: ['SelfManagedKafka', 'SelfManagedKafka'] });
  }, 120_000);
});

describe('MSK IAM: SASL/OAUTHBEARER tokens over TLS', () => {
  it('connects with a token signed by the known key, and refuses one for another region, key or time, each saying which', async () => {
    expect(await describeOver({ brokers: listeners().saslSsl, authentication: iam() })).toMatchObject({ brokers: 1 });
    const refusal = (why: string) => new RegExp(`^Kafka broker 127\\.0\\.0\\.1:\\d+ refused SASL/OAUTHBEARER \\(MSK IAM\\) authentication \\(MSK IAM authentication failed: ${why}.*\\): check that AWS_REGION`);
    await expectRefused({ brokers: listeners().saslSsl, authentication: iam({}, 'us-west-2') }, refusal('the token is signed for kafka\\.us-west-2\\.amazonaws\\.com'));
    await expectRefused({ brokers: listeners().saslSsl, authentication: iam({ secretAccessKey: 'another-secret' }) }, refusal("the token's signature does not match"));
    await expectRefused({ brokers: listeners().saslSsl, authentication: iam({ accessKeyId: 'AKIAUNKNOWNKEY000002' }) }, refusal('the token is signed with an access key this cluster does not know'));
    // Credentials that expired a minute ago sign a token that expired with them.
    await expectRefused({ brokers: listeners().saslSsl, authentication: iam({ expiration: new Date(Date.now() - 60_000) }) }, refusal('the token expired at'));
  });

  it('signs a new token before the session ends, so a connection outlives its first token', async () => {
    // Credentials that last 12 s from each signing give tokens of 12 s, and the broker ends a session
    // with its token: it tells kafkajs the session's lifetime, and kafkajs signs a new token 10 s
    // before then. Were sessions endless, one token would be signed for the connection's life.
    const lifetimeMs = 12_000;
    let signed = 0;
    const renewed = (): KafkaAuthentication => ({
      kind: 'msk-iam',
      region: REGION,
      ca: listeners().caPem,
      credentials: () => {
        signed += 1;
        return Promise.resolve({ ...ACCESS_KEY, expiration: new Date(Date.now() + lifetimeMs) });
      },
    });
    const admin = new KafkaAdmin({ brokers: listeners().saslSsl, authentication: renewed() });
    const started = Date.now();
    try {
      while (Date.now() - started < 2 * lifetimeMs) {
        expect((await admin.describeCluster()).brokers).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    } finally {
      await admin.close();
    }
    expect(signed).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('runs the pipeline exactly once through injected faults', async () => {
    const result = await runSchedule({ ...environment(), runtimeKafka: { brokers: listeners().saslSsl, authentication: iam() } }, 'one-stage', 302, { orders: 600 });
    expect(result.problems).toEqual([]);
    expect(result.checkpoints).toBeGreaterThan(0);
  }, 300_000);
});
