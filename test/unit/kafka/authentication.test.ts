import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkajsSecurity } from '../../../lib/kafka/authentication.js';
import { kafkaFromEnvironment } from '../../../lib/kafka/connection.js';

describe('Kafka authentication from the environment', () => {
  it('is plaintext by default, TLS, MSK IAM or SCRAM on request', () => {
    expect(kafkaFromEnvironment({})).toBeUndefined();
    expect(kafkaFromEnvironment({ KAFKA_BROKERS: '127.0.0.1:9092' })).toEqual({ brokers: ['127.0.0.1:9092'] });
    expect(kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9094', KAFKA_AUTH: 'tls' })?.authentication).toEqual({ kind: 'tls' });
    expect(kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9098', KAFKA_AUTH: 'IAM', AWS_REGION: 'eu-west-1' })?.authentication).toEqual({
      kind: 'msk-iam',
      region: 'eu-west-1',
    });
    expect(
      kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9096', KAFKA_AUTH: 'SCRAM', KAFKA_SASL_USERNAME: 'sluice', KAFKA_SASL_PASSWORD: 's3cret' })
        ?.authentication,
    ).toEqual({ kind: 'scram-sha-512', username: 'sluice', password: 's3cret' });
  });

  it('says what is missing, without repeating a credential', () => {
    expect(() => kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9098', KAFKA_AUTH: 'kerberos' })).toThrow(
      'KAFKA_AUTH is "kerberos": use one of NONE, TLS, IAM, SCRAM',
    );
    expect(() => kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9098', KAFKA_AUTH: 'IAM' })).toThrow('KAFKA_AUTH=IAM needs AWS_REGION');
    let message = '';
    try {
      kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9096', KAFKA_AUTH: 'SCRAM', KAFKA_SASL_PASSWORD: 'hunter2' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^KAFKA_AUTH=SCRAM needs KAFKA_SASL_SECRET_ARN: a Secrets Manager secret/);
    expect(message).not.toContain('hunter2');
  });

  it('signs MSK IAM tokens with the AWS credentials at hand, over TLS', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' });
    try {
      const security = kafkajsSecurity({ kind: 'msk-iam', region: 'eu-west-1' });
      expect(security.ssl).toBe(true);
      const sasl = security.sasl as { mechanism: string; oauthBearerProvider: () => Promise<{ value: string }> };
      expect(sasl.mechanism).toBe('oauthbearer');
      const { value } = await sasl.oauthBearerProvider();
      const url = Buffer.from(value, 'base64url').toString('utf8');
      expect(url).toContain('kafka.eu-west-1.amazonaws.com');
      expect(url).toContain('Action=kafka-cluster%3AConnect');
      expect(url).not.toContain('wJalrXUtnFEMI');
    } finally {
      process.env = saved;
    }
  });
});

describe('a certificate authority from the environment', () => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const withFile = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-ca-')), 'ca.pem');
    writeFileSync(file, text);
    return file;
  };

  it('is read from KAFKA_TLS_CA_FILE into every kind of authentication', () => {
    const file = withFile(pem);
    expect(kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9094', KAFKA_AUTH: 'TLS', KAFKA_TLS_CA_FILE: file })?.authentication).toEqual({ kind: 'tls', ca: pem });
    expect(
      kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9096', KAFKA_AUTH: 'SCRAM', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_TLS_CA_FILE: file })
        ?.authentication,
    ).toEqual({ kind: 'scram-sha-512', username: 'u', password: 'p', ca: pem });
    expect(kafkajsSecurity({ kind: 'tls', ca: pem }).ssl).toEqual({ ca: [pem] });
  });

  it('says what is wrong: a missing file, a file without a certificate, a CA for plaintext', () => {
    expect(() => kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9094', KAFKA_AUTH: 'TLS', KAFKA_TLS_CA_FILE: '/no/such/ca.pem' })).toThrow(
      /^KAFKA_TLS_CA_FILE names \/no\/such\/ca\.pem, which cannot be read \(.*\): bundle the PEM file with the functions$/,
    );
    const notPem = withFile('not a certificate');
    expect(() => kafkaFromEnvironment({ KAFKA_BROKERS: 'b-1:9094', KAFKA_AUTH: 'TLS', KAFKA_TLS_CA_FILE: notPem })).toThrow(
      `KAFKA_TLS_CA_FILE names ${notPem}, which holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
    expect(() => kafkaFromEnvironment({ KAFKA_BROKERS: '127.0.0.1:9092', KAFKA_TLS_CA_FILE: withFile(pem) })).toThrow(
      'KAFKA_TLS_CA_FILE is set but KAFKA_AUTH is NONE (plaintext): set KAFKA_AUTH to TLS, IAM or SCRAM, or unset KAFKA_TLS_CA_FILE',
    );
  });
});
