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
